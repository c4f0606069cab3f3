// --import this file: installs otel-imports-hook.mjs for the rest of the process.
import { register } from 'node:module';

register('./otel-imports-hook.mjs', import.meta.url);
