import { Ajv } from 'ajv';
import type { DataSourceConfig, SemanticView } from '../data/semantic/semantic.model.js';
import { semanticViewsProblem } from '../data/data.views.js';
import { duckDbSourceProblem } from '../data/warehouse/warehouse.duckdb.js';
import { ImportError, rejectNulCharacters, shapeError } from './import.check.js';
import { modelSchema } from './import.deployment-schema.js';

/** A deployment's model as an author sends it: its views, and its data source when it changes. */
export interface ModelInput {
  semanticViews: SemanticView[];
  dataSource?: DataSourceConfig;
}

const validateModel = new Ajv({ allErrors: false, strict: false }).compile(modelSchema);

/**
 * The checks of the import file's deployment, for a model on its own (the authoring API's PUT of a model): its JSON
 * shape, then what the shape cannot say (unique names, joins, drill members, access policies and pre-aggregations
 * that name what exists; a DuckDB source's files). The first problem is an ImportError at its JSON path from the
 * model's root (`$.semanticViews[0].joins[1].view`).
 */
export function checkModel(input: unknown): ModelInput {
  rejectNulCharacters(input, '$');
  if (!validateModel(input)) throw shapeError(validateModel.errors![0]!);
  const model = input as unknown as ModelInput;
  if (model.dataSource?.type === 'duckdb') {
    const problem = duckDbSourceProblem(model.dataSource);
    if (problem !== undefined) throw new ImportError(`$.dataSource${problem.path}`, problem.message);
  }
  const problem = semanticViewsProblem(model.semanticViews);
  if (problem !== undefined) throw new ImportError(`$.semanticViews${problem.path}`, problem.message);
  return model;
}
