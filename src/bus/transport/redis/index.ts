/** The Redis-backed parts of the bus: the Streams transport, its dead letters, and shared state. */
export type { DeadLetter } from './dead-letter.ts';
export { deadLetterCount, readDeadLetters } from './dead-letter.ts';
export type { RedisBusOptions } from './options.ts';
export { BusKeys, defaultConsumerName, defaultRedisBusOptions } from './options.ts';
export { RedisTransport } from './transport.ts';
export type { RedisTransportStats } from './types.ts';
