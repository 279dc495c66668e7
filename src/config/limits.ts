/**
 * Bounds on a config, far above what a real service needs and low enough that generation stays fast and small:
 * every limit here was measured (see test/config/limits.test.ts) so a config at all of them at once generates
 * in seconds and well under 500 MB. A config beyond them is a user error naming the path and the limit.
 */
export const LIMITS = {
  /** Protected actions in one design; a larger system is better designed per service. */
  actions: 500,
  /** Steps in one saga; real sagas have a handful, and each step adds a state to a laid-out diagram. */
  stepsPerSaga: 20,
  /** Saga steps over the whole config: every saga becomes a diagram whose layout cost grows with its states. */
  totalSteps: 100,
  significantFields: 50,
  keyFields: 20,
  assumptions: 50,
  nameLength: 100,
  fieldLength: 200,
  textLength: 500,
  pathLength: 255,
  /** Nesting of the JSON text itself; a valid config is 5 levels deep. */
  jsonDepth: 32,
  /** Bytes of config text; 500 actions with every text at its limit take about 1.5 MB. */
  fileBytes: 8 * 1024 * 1024,
  volumePerDay: 1_000_000_000_000,
} as const;

/** Bounds on durations, in milliseconds, with the config spelling used in messages. */
export const DURATION_LIMITS = {
  retention: { min: 60_000, max: 3_650 * 86_400_000, text: 'between 1m and 3650d (ten years)' },
  detectionLatency: { min: 1, max: 3_600_000, text: 'between 1ms and 1h' },
} as const;
