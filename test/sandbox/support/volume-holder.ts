/**
 * Another organism process using a workspace volume (as `organism tools call` beside a daemon
 * would): opens it, prints its state, waits for a line on stdin, releases it and exits.
 * Arguments: folder, image, bytes.
 */
import { openVolume } from '../../../src/sandbox/volume/index.ts';

const [dir = '', image = '', bytes = '0'] = process.argv.slice(2);
const volume = await openVolume({ dir, image, maxBytes: Number(bytes), setting: 'test.max_bytes' });
process.stdout.write(`${volume.state}\n`);
process.stdin.once('data', async () => {
  await volume.release();
  process.stdout.write('released\n');
  process.exit(0);
});
