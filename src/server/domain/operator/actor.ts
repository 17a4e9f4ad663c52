/** Who acts in the console or the command line, and the roles (roles.ts grants them). */
import type { operatorRoles } from '../../db/schema/operator.ts';

export type Role = (typeof operatorRoles.$inferSelect)['role'];

/** An operator (their user id, e-mail and role) or the command line without `--as` (database access). */
export type Actor = { id: string; email: string; role: Role } | { id: null; email: 'command line'; role: 'cli' };
export type OperatorActor = Extract<Actor, { id: string }>;
export const COMMAND_LINE: Actor = { id: null, email: 'command line', role: 'cli' };
