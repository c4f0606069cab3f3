// htm bound to Preact's h: the dashboard's templates, with no build step.
import htm from '../vendor/htm.js';
import { h } from '../vendor/preact.js';

export const html = htm.bind(h);
