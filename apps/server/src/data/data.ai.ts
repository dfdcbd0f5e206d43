import { randomUUID } from 'node:crypto';
import type { EmbedPrincipal, PlatformUserPrincipal } from '../core/core.principal.js';
import { readerOf, requireReadableDashboard } from '../dashboards/dashboards.service.js';
import { AppError } from '../core/core.errors.js';
import { findSessionPresentation } from '../sessions/sessions.store.js';
import type { SemanticModel, SemanticView } from './semantic/semantic.model.js';
import type { ModelAccess } from './policy/policy.access.js';
import { parseSemanticQuery, SemanticQuery } from './semantic/semantic.query.js';
import type { QueryResult } from './semantic/semantic.results.js';
import { runSemanticQuery } from './data.run.js';
import { openDataScope } from './data.scope.js';
import type { DataContext } from './data.scope.js';

/**
 * Questions in plain language (SPEC `svc:event:ai-query`): an OpenAI-compatible chat completions endpoint turns
 * the question into one semantic query through a tool call; svc checks that query against the deployment's
 * semantic views like any other, runs it, and answers with the rows. The model never sees data, only the
 * semantic model and the question; it can reach nothing a widget could not.
 */
export interface AiSettings {
  /** `SVC_AI_BASE_URL`, e.g. `https://api.openai.com/v1`; unset: the AI surfaces say they are not set up (core.config.ts). */
  baseUrl: string | undefined;
  model: string;
  apiKey: string | undefined;
  timeoutMs: number;
}

export interface AiQueryRequest {
  question: string;
  chatId?: string;
  /** The dashboard asked about (the AI widget, an app); else the session's deployment. */
  publicId?: string;
  timezone?: string;
}

export interface AiAnswer extends QueryResult {
  chatId: string;
  question: string;
  /** The model's words, when it gave any beside the tool call. */
  answer: string | null;
  /** The semantic query the model asked for, as svc ran it. */
  query: SemanticQuery;
  timezone: string;
}

export const TOOL_NAME = 'run_semantic_query';

/**
 * The semantic model as the model reads it: every view with the members this viewer may see, their types and
 * titles. A member an access policy hides is never named to the model, nor a view it may see nothing of.
 */
export function describeModel(model: SemanticModel, access?: ModelAccess): string {
  const lines: string[] = [];
  const visible = (view: SemanticView, name: string) =>
    access === undefined || access.canSee({ name: `${view.name}.${name}`, view });
  const shown = [...model.views.values()].map((view) => ({
    view, dimensions: view.dimensions.filter((d) => visible(view, d.name)), measures: view.measures.filter((m) => visible(view, m.name)),
  })).filter(({ dimensions, measures }) => dimensions.length + measures.length > 0);
  const shownNames = new Set(shown.map(({ view }) => view.name));
  for (const { view, dimensions, measures } of shown) {
    const joins = (view.joins ?? []).filter((j) => shownNames.has(j.view));
    lines.push(`view ${view.name}${view.title ? ` (${view.title})` : ''}${joins.length ? `, joins ${joins.map((j) => j.view).join(', ')}` : ''}`);
    for (const d of dimensions) lines.push(`  dimension ${view.name}.${d.name}: ${d.type}${d.title ? ` (${d.title})` : ''}`);
    for (const m of measures) lines.push(`  measure ${view.name}.${m.name}: ${m.type}${m.title ? ` (${m.title})` : ''}`);
  }
  return lines.join('\n');
}

interface ToolCall { function?: { name?: string; arguments?: string } }
interface Completion { choices?: Array<{ message?: { content?: string | null; tool_calls?: ToolCall[] } }> }

async function askModel(settings: AiSettings & { baseUrl: string }, model: SemanticModel, access: ModelAccess, question: string, timezone: string, now: Date): Promise<{ arguments: unknown; content: string | null }> {
  const system = [
    'You answer questions about data by calling the tool run_semantic_query exactly once.',
    'Use only these members (a query takes its measures from one view, and its dimensions from that view or the views it joins):',
    describeModel(model, access),
    `Dates are read in the time zone ${timezone}; today is ${now.toISOString().slice(0, 10)}.`,
  ].join('\n');
  let response: Response;
  try {
    response = await fetch(`${settings.baseUrl.replace(/\/$/, '')}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}) },
      body: JSON.stringify({
        model: settings.model,
        messages: [{ role: 'system', content: system }, { role: 'user', content: question }],
        tools: [{ type: 'function', function: { name: TOOL_NAME, description: 'Run a semantic query (Cube query format) and return its rows', parameters: SemanticQuery } }],
        tool_choice: { type: 'function', function: { name: TOOL_NAME } },
      }),
      signal: AbortSignal.timeout(settings.timeoutMs),
    });
  } catch (error) {
    throw new AppError('bad_gateway', `the AI endpoint could not be reached: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!response.ok) throw new AppError('bad_gateway', `the AI endpoint answered ${response.status}`);
  const completion = (await response.json().catch(() => ({}))) as Completion;
  const message = completion.choices?.[0]?.message;
  const call = message?.tool_calls?.find((c) => c.function?.name === TOOL_NAME);
  if (call?.function?.arguments === undefined) throw new AppError('bad_gateway', 'the AI endpoint answered without a run_semantic_query tool call');
  try {
    return { arguments: JSON.parse(call.function.arguments), content: message?.content ?? null };
  } catch {
    throw new AppError('bad_gateway', 'the AI endpoint\'s tool call arguments are not JSON');
  }
}

/** `POST /api/v1/embed/ai/query`: a question, answered with a checked semantic query and its rows. */
export async function answerQuestion(dc: DataContext, settings: AiSettings, principal: PlatformUserPrincipal | EmbedPrincipal, request: AiQueryRequest): Promise<AiAnswer> {
  let deploymentId: number;
  if (request.publicId !== undefined) {
    deploymentId = (await requireReadableDashboard(dc, readerOf(principal), request.publicId)).deployment_id;
  } else if (principal.kind === 'embed') {
    // A session limited to named dashboards asks about one of them, not about its whole deployment.
    if (principal.dashboards !== null) throw new AppError('forbidden', "this session was minted for named dashboards (Generate Session's dashboards): ask with the publicId of one", 'publicId');
    deploymentId = principal.deploymentId;
  } else {
    throw new AppError('invalid_parameter', 'publicId: a platform user asks about a dashboard; give its publicId', 'publicId');
  }
  if (principal.kind === 'embed') {
    const presentation = await findSessionPresentation(dc.db, principal.accountId, principal.sessionId);
    const sessionSettings = JSON.parse(presentation?.settings ?? '{}') as { allowAi?: unknown };
    if (sessionSettings.allowAi === false) throw new AppError('forbidden', 'this session was minted with settings.allowAi false', 'settings.allowAi');
  }
  if (settings.baseUrl === undefined) throw new AppError('service_unavailable', 'questions in plain language are not set up on this svc server (SVC_AI_BASE_URL is unset)');
  const scope = await openDataScope(dc, principal, deploymentId, request.timezone);
  const { timezone } = scope;
  const asked = await askModel({ ...settings, baseUrl: settings.baseUrl }, scope.model, scope.access, request.question, timezone, dc.now());
  let query: SemanticQuery;
  try {
    query = parseSemanticQuery(asked.arguments, 'toolCall');
    const result = await runSemanticQuery(dc, scope, query, 'toolCall');
    return { ...result, chatId: request.chatId ?? randomUUID(), question: request.question, answer: asked.content, query, timezone };
  } catch (error) {
    // The model's query is its own mistake, not the viewer's: a 422 naming the member.
    if (error instanceof AppError && error.status === 400) throw new AppError('invalid_query', `the AI asked for a query svc cannot run: ${error.message}`, error.field);
    throw error;
  }
}
