import { deferred } from '../deferred.js';
import type { ExploreBarProps, PersonalChartsProps } from './Explore.js';

/**
 * Exploration (issue 35), a chunk of its own: the dashboard renders these only for a session whose settings.explore
 * is view or create, so that a session without exploration loads none of the builder, its words or its panels. Until
 * the chunk is in, nothing shows in their place.
 */
const load = () => import('./Explore.js');
export const ExploreBar = deferred<ExploreBarProps>(() => load().then((module) => module.ExploreBar), () => null);
export const PersonalCharts = deferred<PersonalChartsProps>(() => load().then((module) => module.PersonalCharts), () => null);
