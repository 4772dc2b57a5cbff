// Launch, step 4: start the nodes. The backend starts (or submits) the server on every node, head first, and closes
// the attempt when a node fails; the server's API key is kept for the bot's own requests, and the start is told.

import type { Attempt } from '../../ledger/attempts.ts';
import { rememberApiKey } from '../api-key.ts';
import type { Opened, ServerBackend } from '../backend.ts';
import { type Engine, publish } from '../engine.ts';
import type { LaunchEvent, LaunchRequest } from './types.ts';

export async function startNodes(
  engine: Engine,
  req: LaunchRequest,
  backend: ServerBackend,
  opened: Opened,
  emit: (e: LaunchEvent) => void,
): Promise<Attempt> {
  const attempt = await backend.startNodes(engine, req, opened);
  rememberApiKey(engine, attempt.id, req.profile);
  publish(engine, emit, { kind: 'started', attempt });
  return attempt;
}
