import { call } from '../api.js';

/**
 * The model's calls (docs/authoring.md "The model"): the meta every platform user reads, the model with its access
 * policies (admins), the check that writes nothing, and the replace over the revision read.
 */

export interface MetaMember { name: string; title: string; shortTitle: string; type: string; aggType?: string; format?: string; primaryKey?: boolean }

export interface MetaCube {
  name: string;
  title: string;
  measures: MetaMember[];
  dimensions: MetaMember[];
  joins: Array<{ name: string; relationship: string }>;
  preAggregations: Array<{ name: string; measures: string[]; dimensions: string[]; timeDimension: string | null; granularity: string | null }>;
}

export interface ModelMeta { modelRevision: number; cubes: MetaCube[] }

/** A semantic view as the import file writes it: the console shows its access policies and edits it as JSON. */
export interface SemanticView { name: string; accessPolicy?: unknown[]; [key: string]: unknown }

export interface DeploymentModel { id: number; name: string; modelRevision: number; semanticViews: SemanticView[]; demoModel: boolean }

export interface ModelCheck {
  modelRevision: number;
  changes: Array<{ view: string; change: 'added' | 'removed' | 'changed'; membersAdded: string[]; membersRemoved: string[]; membersChanged: string[] }>;
  dataSourceChanged: boolean;
  breaks: Array<{ publicId: string; widgetId: string; field: string; message: string }>;
}

export const getMeta = (deploymentId: number) => call<ModelMeta>('GET', `/api/v1/deployments/${deploymentId}/meta`);
export const getModel = (deploymentId: number) => call<DeploymentModel>('GET', `/api/v1/deployments/${deploymentId}`);
export const checkModel = (deploymentId: number, body: unknown) => call<ModelCheck>('POST', `/api/v1/deployments/${deploymentId}/model/check`, body);
export const replaceModel = (deploymentId: number, body: unknown, revision: number, force: boolean) =>
  call<DeploymentModel>('PUT', `/api/v1/deployments/${deploymentId}/model${force ? '?force=true' : ''}`, body, { 'if-match': `"model-${revision}"` });

/** `GET .../pre-aggregations` (admins): each pre-aggregation's build in each of its time zones. */
export interface PreAggregationStatus {
  view: string;
  name: string;
  timezone: string;
  built: boolean;
  builtAt: string | null;
  buildMs: number | null;
  rows: number | null;
  sizeBytes: number | null;
  partitions: Array<{ partition: string; rows: number }>;
  due: string | null;
  nextDueAt: string | null;
  lastError: { message: string; at: string } | null;
}

export const listPreAggregations = (deploymentId: number) => call<{ items: PreAggregationStatus[] }>('GET', `/api/v1/deployments/${deploymentId}/pre-aggregations`);
