import { Type } from 'typebox';
import { AppQueryResult } from '../data/data.schema.js';
import { SemanticQuery } from '../data/semantic/semantic.query.js';
import { ModelMeta } from '../deployments/deployments.schema.js';

// Request and response schemas of issue 35's explore routes (also the OpenAPI document; docs/explore.md).

/** `GET /api/v1/embed/meta`: the console's `Meta` (its Builder reads it unchanged), without the model's revision. */
export const EmbedMeta = Type.Object({ cubes: ModelMeta.properties.cubes }, { title: 'EmbedMeta' });

export const ExploreQueryBody = Type.Object(
  {
    query: Type.Optional(SemanticQuery),
    chartId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'A saved chart this viewer may open: its query runs under this viewer\'s policies' })),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone (default: the account\'s, else UTC)' })),
    force: Type.Optional(Type.Boolean({ description: 'Past the result cache' })),
  },
  { additionalProperties: false, title: 'ExploreQueryRequest', description: 'Exactly one of query (settings.explore create) and chartId (view or create)' },
);

/** The widget data answer's shape: no statement, no rollup hint (those are for admins' previews). */
export const ExploreQueryResult = Type.Object(
  { ...AppQueryResult.properties, ignoredFilters: Type.Array(Type.String(), { description: 'Always empty: an explore query carries its filters itself' }) },
  { title: 'ExploreQueryResult' },
);
