import { Type } from 'typebox';
import { Id, Nullable } from '../core/core.schema.js';

// The authoring API's deployment schemas (docs/authoring.md "The model"): answers and the model's body, also the
// OpenAPI document. deployments.routes.ts wires them to the service.

const AnyObject = Type.Object({}, { additionalProperties: true });

export const DeploymentSummary = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  modelRevision: Type.Integer({ description: 'The revision of its model: its ETag is "model-<modelRevision>"' }),
}, { title: 'DeploymentSummary' });

export const Deployment = Type.Object({
  ...DeploymentSummary.properties,
  dataSource: Type.Object({ type: Type.String() }, { additionalProperties: true, description: 'The data source, its secrets (a PostgreSQL password) shown as ****' }),
  semanticViews: Type.Array(AnyObject, { description: 'The semantic views, as the import file writes them' }),
  demoModel: Type.Boolean({ description: 'True while the deployment runs on the bundled demo views (none of its own stored yet)' }),
}, { title: 'Deployment' });

const MetaMember = Type.Object({
  name: Type.String(), title: Type.String(), shortTitle: Type.String(), type: Type.String(),
  aggType: Type.Optional(Type.String()), format: Type.Optional(Type.String()), decimalPlaces: Type.Optional(Nullable(Type.Integer())), primaryKey: Type.Optional(Type.Boolean()),
}, { title: 'MetaMember' });

export const ModelMeta = Type.Object({
  modelRevision: Type.Integer(),
  cubes: Type.Array(Type.Object({
    name: Type.String(), title: Type.String(), type: Type.String(),
    measures: Type.Array(MetaMember), dimensions: Type.Array(MetaMember), segments: Type.Array(MetaMember),
    joins: Type.Array(Type.Object({ name: Type.String(), relationship: Type.String() })),
    drillMembers: Type.Array(Type.String()),
    preAggregations: Type.Array(Type.Object({
      name: Type.String(), measures: Type.Array(Type.String()), dimensions: Type.Array(Type.String()), timeDimension: Nullable(Type.String()), granularity: Nullable(Type.String()),
    })),
  }, { title: 'MetaCube' })),
}, { title: 'ModelMeta' });

export const ModelBody = Type.Object({
  semanticViews: Type.Array(AnyObject, { description: 'The semantic views (docs/data.md): checked as the import checks a deployment\'s, errors at their JSON path' }),
  dataSource: Type.Optional(Type.Object({ type: Type.String() }, { additionalProperties: true, description: 'The data source; left out: unchanged. A password sent back as **** keeps the current one' })),
}, { additionalProperties: true, title: 'ModelBody' });

export const DeploymentParams = Type.Object({ deploymentId: Id });

export const DeploymentList = Type.Object({ items: Type.Array(DeploymentSummary) });

export const ModelIfMatch = Type.Object({ 'if-match': Type.Optional(Type.String({ maxLength: 200, description: 'The ETag of the model you changed, as its GET answered: "model-<revision>"' })) });

export const ModelQuery = Type.Object({ force: Type.Optional(Type.Boolean({ description: 'Replace it even though published widgets break (each is named in the audit log)' })) }, { additionalProperties: false });

const Names = Type.Array(Type.String());

export const ModelCheck = Type.Object({
  modelRevision: Type.Integer({ description: 'The revision it was checked against: save over it with If-Match "model-<modelRevision>"' }),
  changes: Type.Array(Type.Object({
    view: Type.String(),
    change: Type.Union([Type.Literal('added'), Type.Literal('removed'), Type.Literal('changed')]),
    membersAdded: Names, membersRemoved: Names,
    membersChanged: Type.Array(Type.String(), { description: 'Members of both whose definition differs' }),
  }, { title: 'ModelViewChange' }), { description: 'The views the new model adds, removes or changes (unchanged views are left out)' }),
  dataSourceChanged: Type.Boolean(),
  breaks: Type.Array(Type.Object({
    publicId: Type.String(), widgetId: Type.String(), field: Type.String({ description: "The JSON path in the dashboard that fails" }), message: Type.String(),
  }), { description: 'The widgets of published dashboards the new model could not run (a replace would be a 409 without force)' }),
}, { title: 'ModelCheck' });
