/** Thread history: the in-memory store the bus uses, and its append-only log on disk. */
export { defaultHistoryLogOptions, HistoryLog, type HistoryLogOptions, type ReplayReport } from './disk.ts';
export {
  type HistoryEntry,
  type HistoryListener,
  type HistoryOptions,
  type RecentMessage,
  type StopListener,
  ThreadHistory,
  type ThreadSummary,
  toView,
} from './memory.ts';
