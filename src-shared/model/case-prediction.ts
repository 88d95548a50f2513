// A sweep case's prediction as the sweep result carries it (validate-case.ts makes it).
import type { RoundStage } from '../lab/round-stages';
import type { ModelStage, Resource } from './round-model';

export interface CasePrediction {
  roundMs: number;
  bottleneck: { stage: ModelStage; resource: Resource };
  /** Each stage's predicted ms (the model's breakdown; sync comes before the first measured stage). */
  stagesMs: Partial<Record<ModelStage, number>>;
  /** (predicted - measured) / measured median; null when the case has no measured round. */
  error: number | null;
  tolerance: number;
  within: boolean | null;
  /** Where the prediction misses: the stage whose predicted ms is furthest from its measured median. */
  wrongStage?: { stage: RoundStage; predictedMs: number; measuredMs: number };
}
