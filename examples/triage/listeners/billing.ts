import { team } from './team.ts';

/** Tickets about invoices, refunds and payments. */
export default team('billing', 'B');
