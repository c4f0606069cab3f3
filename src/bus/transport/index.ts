/** What carries messages between hops: the interface, its implementations, and the one factory that picks one. */
export type { BusBackend, BusBackendOptions } from './backend.ts';
export { createBusBackend } from './factory.ts';
export { MemoryTransport } from './memory.ts';
export type { Deliver, SubscribeOptions, Subscription, Transport } from './types.ts';
