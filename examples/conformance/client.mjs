#!/usr/bin/env node
// `node examples/conformance/client.mjs <server-url>`: runs client.ts (TypeScript, through tsx as
// the repository's tests do) from any working folder, which is where the suite runs its command.
import { register } from 'tsx/esm/api';

register();
await import('./client.ts');
