/** The in-memory transport against the shared Transport contract. */
import { MemoryTransport } from '../../src/bus/transport/memory.ts';
import { transportContract } from './transport.contract.ts';

transportContract('memory', {
  fresh: async () => new MemoryTransport(),
  capabilities: { boundedInFlight: false, redelivery: false },
});
