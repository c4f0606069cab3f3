// --import this file: installs dist-imports-hook.mjs for the rest of the process.
import { register } from 'node:module';

register('./dist-imports-hook.mjs', import.meta.url);
