/**
 * npm run signer: the signer alone (issue 31), the only process that loads WALLET_SEED. Production runs it apart
 * from the gateway and the worker (SIGNER=external there), on the same database, DATA_DIR or SIGNER_SOCKET, and
 * SIGNER_TOKEN; see README.md, Production.
 */
import { openTool, toolFail } from '../cli/tool.ts';
import { startFailure } from '../environment.ts';
import { startSigner } from './service.ts';

const tool = await openTool({ quiet: false, poolSize: 4, gracefulStop: true });
const { config, log, database } = tool;
const signer = await startSigner(config, log, database.pool).catch(async (error: unknown) => {
  await database.close();
  toolFail(startFailure(error));
});
log.flush();
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await signer.close();
  await database.close();
  process.exit(0);
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop());
