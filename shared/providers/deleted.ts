// What every kind's delete does with "not found": the target is gone, so the delete has done its work.
// Each cloud says "gone" its own way; the caller passes its test.

/** Runs a delete call; an error `gone` recognises (the target no longer exists) is success. */
export async function deleted(call: () => Promise<unknown>, gone: (err: unknown) => boolean): Promise<void> {
  try {
    await call();
  } catch (err) {
    if (!gone(err)) throw err;
  }
}
