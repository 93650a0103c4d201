import path from 'node:path';
import { projectRoot } from '../config/projectRoot.js';

/**
 * The compiled workflow code the workers load (and the tests bundle once per run). Its own module, not in
 * `worker.ts` (whose worker SDK costs a second to load) nor `constants.ts` (which workflow code imports, where
 * `node:path` cannot go).
 */
export const workflowsPath = path.join(projectRoot, 'dist', 'workflows', 'index.js');
