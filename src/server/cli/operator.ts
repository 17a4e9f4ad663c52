/**
 * npm run operator -- <command> [--as <e-mail>]: the operator console's actions for scripts, with the server's
 * configuration and database (tool.ts). Every action names the operator who acts (`--as`) and is checked against
 * their role and written to the audit log as in the console; only `grant` and `revoke` may run without `--as`
 * (database access is the authority then, recorded as `command line`), so the first admin can be made.
 */
import { createMailDelivery } from '../adapters/mail/mailer.ts';
import { DomainError } from '../domain/errors.ts';
import { COMMAND_LINE, type Actor } from '../domain/operator/actor.ts';
import { approveAdjustment, listAdjustments, proposeAdjustment, rejectAdjustment } from '../domain/operator/adjustments.ts';
import { listAudit } from '../domain/operator/audit.ts';
import { OperatorError } from '../domain/operator/errors.ts';
import { freezeAccount, unfreezeAccount } from '../domain/operator/freeze.ts';
import { listOutbox, resendMail } from '../domain/operator/mail.ts';
import { decidedBy, grantRole, isRole, listOperators, operatorByEmail, revokeRole } from '../domain/operator/roles.ts';
import { resolveAccount, searchUsers } from '../domain/operator/search.ts';
import { stuckWork } from '../domain/operator/stuck.ts';
import { userView } from '../domain/operator/user-view.ts';
import { approveWithdrawal, listUnsealedWithdrawals, listWithdrawalsUnderReview, rejectWithdrawal, resealWithdrawal } from '../domain/withdrawals/review.ts';
import { openTool, toolFail } from './tool.ts';
import { approvalSealer } from '../domain/signing.ts';
import { signerChannel } from '../adapters/signer/channel.ts';

const USAGE = `usage: npm run operator -- <command> [--as <operator e-mail>]
  grant <e-mail> <support|finance|admin> [reason]   give a user a role (an admin, or the command line without --as)
  revoke <e-mail> [reason]                           take a user's role away
  list                                               the operators and their roles
  search <e-mail|user id|account id|telegram id|address|tx hash>
  show <user id|account id|e-mail>                   the user view, as JSON
  freeze <user|account> <reason>                     freeze the account's withdrawals (support)
  unfreeze <user|account> <reason>                   lift the freeze (support)
  credit <user|account> <currency> <amount> <reason> propose a credit (finance); applied when another approves
  debit <user|account> <currency> <amount> <reason>  propose a debit (finance)
  proposals                                          credits and debits waiting for approval
  approve <proposal id> [reason]                     apply another operator's proposal (finance)
  reject <proposal id> <reason>                      close another operator's proposal (finance)
  reviews                                            withdrawals waiting for review (finance)
  approve-withdrawal <withdrawal id> [reason]        let a withdrawal under review go on (finance)
  reject-withdrawal <withdrawal id> <reason>         refuse it: its hold goes back, the user sees Failed (finance)
  unsealed                                           outside withdrawals on their way without an approval seal (from before it): the signer refuses them
  reseal-withdrawal <withdrawal id> [reason]         re-approve one of those, its figures checked: sealed for the signer (finance)
  outbox [outbox|sent|failed]                        the newest mails
  resend <mail id> [reason]                          send an outbox mail again (support)
  stuck [minutes]                                    deposits, withdrawals and sweeps pending longer (default 30)
  audit [limit]                                      the audit log, newest first`;

const argv = process.argv.slice(2);
const asAt = argv.indexOf('--as');
const asEmail = asAt >= 0 ? argv[asAt + 1] : undefined;
if (asAt >= 0 && !asEmail) toolFail(USAGE);
const [command, ...args] = asAt >= 0 ? [...argv.slice(0, asAt), ...argv.slice(asAt + 2)] : argv;
const ARITY: Record<string, [number, number]> = {
  grant: [2, 99], revoke: [1, 99], list: [0, 0], search: [1, 1], show: [1, 1], freeze: [2, 99], unfreeze: [2, 99], credit: [4, 99], debit: [4, 99],
  proposals: [0, 0], approve: [1, 99], reject: [2, 99], reviews: [0, 0], 'approve-withdrawal': [1, 99], 'reject-withdrawal': [2, 99], unsealed: [0, 0], 'reseal-withdrawal': [1, 99], outbox: [0, 1], resend: [1, 99], stuck: [0, 1], audit: [0, 1],
};
const arity = command === undefined ? undefined : ARITY[command];
if (!arity || args.length < arity[0] || args.length > arity[1]) toolFail(USAGE);
const rest = (from: number) => args.slice(from).join(' ').trim() || undefined;
const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

const { config, log, database } = await openTool();
const { pool } = database;
let code = 0;
try {
  const actor: Actor = asEmail ? await operatorByEmail(pool, asEmail) : COMMAND_LINE;
  const [first = '', second = '', third = ''] = args;
  switch (command) {
    case 'grant': {
      if (!isRole(second)) toolFail(`the role is support, finance or admin, not ${second}`);
      const before = await grantRole(pool, actor, { email: first, role: second, reason: rest(2) });
      process.stdout.write(`${first} is ${second}${before && before !== second ? ` (was ${before})` : ''}\n`);
      break;
    }
    case 'revoke': {
      const role = await revokeRole(pool, actor, { email: first, reason: rest(1) });
      process.stdout.write(role ? `${first} is no longer ${role}\n` : `${first} held no role\n`);
      break;
    }
    case 'list':
      for (const o of await listOperators(pool)) process.stdout.write(`${o.email ?? o.userId}\t${o.role}\tgranted ${o.grantedAt} by ${o.grantedBy ?? 'command line'}\n`);
      break;
    case 'search':
      print(await searchUsers(pool, first));
      break;
    case 'show':
      print(await userView(pool, (await resolveAccount(pool, first)).userId));
      break;
    case 'freeze':
    case 'unfreeze': {
      const { accountId } = await resolveAccount(pool, first);
      const reason = rest(1) ?? '';
      const done = command === 'freeze' ? await freezeAccount(pool, actor, { accountId, reason }) : await unfreezeAccount(pool, actor, { accountId, reason });
      process.stdout.write(`account ${accountId}: ${done === 'already' ? `already ${command === 'freeze' ? 'frozen' : 'open'}` : done}\n`);
      break;
    }
    case 'credit':
    case 'debit': {
      const { accountId } = await resolveAccount(pool, first);
      const proposal = await proposeAdjustment(pool, actor, { accountId, kind: command === 'credit' ? 'CREDIT' : 'DEBIT', currency: second.toUpperCase(), amount: third, reason: rest(3) ?? '' });
      process.stdout.write(`proposed ${proposal.id}: ${command} ${proposal.amount} ${proposal.currency} to account ${accountId}; another finance operator approves it\n`);
      break;
    }
    case 'proposals':
      print(await listAdjustments(pool));
      break;
    case 'approve':
      process.stdout.write(`${first}: ${await approveAdjustment(pool, actor, { id: first, reason: rest(1) })}\n`);
      break;
    case 'reject':
      process.stdout.write(`${first}: ${await rejectAdjustment(pool, actor, { id: first, reason: rest(1) ?? '' })}\n`);
      break;
    case 'reviews':
      print(await listWithdrawalsUnderReview(pool));
      break;
    case 'approve-withdrawal':
    case 'reject-withdrawal': {
      // The review keeps who decided on the order: a named operator, whose role is checked again in its transaction.
      if (actor.id === null) throw new OperatorError('FORBIDDEN', 'Name the operator who acts (--as <e-mail>)');
      const approve = command === 'approve-withdrawal';
      const reason = rest(1);
      const line = { action: approve ? 'withdrawal.approve' : 'withdrawal.reject', subject: `withdrawal:${first}`, reason };
      const input = { orderId: first, operatorId: actor.id, reason: reason ?? '' };
      // Approved, its figures are sealed for the signer with the channel's token (SIGNER_TOKEN, or DATA_DIR's).
      const seal = approve ? approvalSealer((await signerChannel({ socket: config.signer.socket, token: config.signer.token, dataDir: config.dataDir, production: config.production, database: config.databaseUrl })).token) : undefined;
      const done = approve ? await approveWithdrawal(pool, input, decidedBy(actor, 'finance', line), seal) : await rejectWithdrawal(pool, input, decidedBy(actor, 'finance', line));
      process.stdout.write(`withdrawal ${first}: ${done}\n`);
      break;
    }
    case 'unsealed':
      print(await listUnsealedWithdrawals(pool));
      break;
    case 'reseal-withdrawal': {
      if (actor.id === null) throw new OperatorError('FORBIDDEN', 'Name the operator who acts (--as <e-mail>)');
      const line = { action: 'withdrawal.reseal', subject: `withdrawal:${first}`, reason: rest(1) };
      const seal = approvalSealer((await signerChannel({ socket: config.signer.socket, token: config.signer.token, dataDir: config.dataDir, production: config.production, database: config.databaseUrl })).token);
      process.stdout.write(`withdrawal ${first}: ${await resealWithdrawal(pool, { orderId: first, operatorId: actor.id, reason: rest(1) }, seal, decidedBy(actor, 'finance', line))}\n`);
      break;
    }
    case 'outbox':
      print(await listOutbox(pool, { status: first === 'outbox' || first === 'sent' || first === 'failed' ? first : undefined }));
      break;
    case 'resend': {
      const delivery = createMailDelivery({ log, smtpUrl: config.smtpUrl, from: config.mailFrom });
      try {
        const sent = await resendMail(pool, delivery, actor, { id: first, reason: rest(1) });
        process.stdout.write(`mail ${first} resent as ${sent.id}: ${sent.status}\n`);
      } finally {
        delivery.close();
      }
      break;
    }
    case 'stuck':
      print(await stuckWork(pool, first ? Number(first) || 30 : 30));
      break;
    default:
      print(await listAudit(pool, { limit: first ? Number(first) || 50 : 50 }));
  }
} catch (error) {
  if (!(error instanceof DomainError)) throw error;
  process.stderr.write(`operator: ${error.message} (${error.code})\n`);
  code = 1;
} finally {
  await database.close();
}
process.exit(code);
