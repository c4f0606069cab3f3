/** Placeholder until the benchmark lands. */
export async function* run(): AsyncIterable<Record<string, unknown>> {}
