/** Placeholder until the stack harness lands: unit tests do not need it. */
export async function stopSharedStack(): Promise<void> {}
