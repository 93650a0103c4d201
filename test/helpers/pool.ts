/** Runs `tasks` with at most `limit` at a time and returns their results in order (the matrices' many calls). */
export async function pool<R>(limit: number, tasks: Array<() => Promise<R>>): Promise<R[]> {
  const results: R[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]();
    }
  }));
  return results;
}
