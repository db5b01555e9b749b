// What every kind does with "not found": a delete has done its work (the target is gone), a read finds
// nothing. Each cloud says "not found" its own way; the caller passes its test.

/** Runs a delete call; an error `gone` recognises (the target no longer exists) is success. */
export async function deleted(call: () => Promise<unknown>, gone: (err: unknown) => boolean): Promise<void> {
  try {
    await call();
  } catch (err) {
    if (!gone(err)) throw err;
  }
}

/** Runs a read call; an error `gone` recognises (the target does not exist) reads as undefined. */
export async function found<T>(
  call: () => Promise<T | undefined>,
  gone: (err: unknown) => boolean,
): Promise<T | undefined> {
  try {
    return await call();
  } catch (err) {
    if (gone(err)) return undefined;
    throw err;
  }
}
