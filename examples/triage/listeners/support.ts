import { team } from './team.ts';

/** Every other ticket. */
export default team('support', 'S');
