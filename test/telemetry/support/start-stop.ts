/** Starts the daemon on the organism.yaml given as argument, stops it, and exits. */
import { startDaemon } from '../../../src/daemon.ts';

const daemon = await startDaemon({ configPath: process.argv[2]!, port: 0, reloadOnSighup: false });
await daemon.close(100);
process.exit(0);
