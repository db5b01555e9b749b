// A database administrator password whose only copy driftless keeps is the connection Secret: generated
// before create (the engine publishes an absent resource's connection details before it calls create, so
// the password outlives a crash at any point), or taken from a Secret the user names and rotated when that
// value changes. Cloud-neutral: any kind with an administrator password can use it.
import { createHmac, randomBytes, randomInt } from "node:crypto";
import {
  type ConnectionDetails,
  CredentialsError,
  type ExternalObservation,
  InvalidSpecError,
} from "../api/external.ts";
import type { ManagedResource } from "../api/managed.ts";
import type { SecretKeySelector } from "../api/meta.ts";

/** The connection Secret key of the password. */
export const PASSWORD_KEY = "password";

const ALPHA = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS = "0123456789";

/**
 * 32 characters with a letter first and at least one lower-case letter, upper-case letter and digit:
 * what Azure's complexity rule (three of four classes) and every engine's character rules accept.
 */
export function strongPassword(length = 32): string {
  const pick = (from: string) => from.charAt(randomInt(from.length));
  const classes = [ALPHA.slice(0, 26), ALPHA.slice(26), DIGITS];
  for (;;) {
    let pw = pick(ALPHA);
    while (pw.length < length) pw += pick(ALPHA + DIGITS);
    if (classes.every((c) => [...pw].some((ch) => c.includes(ch)))) return pw;
  }
}

// Which password this process set last per resource uid, as an HMAC under a key that stays in memory: it
// only bridges the engine's Secret cache (stale for a short TTL) right after a rotation.
const MEMORY_KEY = randomBytes(32);
const lastSet = new Map<string, string>();
const mac = (uid: string, password: string) =>
  createHmac("sha256", MEMORY_KEY).update(`${uid}\0${password}`).digest("hex");

export class ConnectionPassword<F, A> {
  readonly #readSecretKey: (ref: SecretKeySelector) => Promise<string>;
  /** The forProvider field of the user's Secret reference, for messages. */
  readonly #field: string;
  readonly #pending = new WeakMap<ExternalObservation<F, A>, string>();

  constructor(readSecretKey: (ref: SecretKeySelector) => Promise<string>, field: string) {
    this.#readSecretKey = readSecretKey;
    this.#field = field;
  }

  /** A Secret key's value, or undefined when the Secret or the key is missing. */
  async #tryRead(ref: SecretKeySelector): Promise<string | undefined> {
    return this.#readSecretKey(ref).catch((err: unknown) => {
      if (err instanceof CredentialsError) return undefined;
      throw err;
    });
  }

  async #fromUser(ref: SecretKeySelector): Promise<string> {
    const value = await this.#tryRead(ref);
    if (value === undefined) {
      // Not a CredentialsError: this Secret belongs to the resource, not to the ProviderConfig.
      throw new Error(
        `cannot read the password: Secret ${ref.namespace}/${ref.name} has no key "${ref.key}" (spec.forProvider.${this.#field})`,
      );
    }
    if (value === "")
      throw new InvalidSpecError(
        `the password in Secret ${ref.namespace}/${ref.name} key "${ref.key}" is empty`,
      );
    return value;
  }

  #publishedAt(mr: ManagedResource<F, A>): SecretKeySelector | undefined {
    const to = mr.spec.writeConnectionSecretToRef;
    return to && { namespace: to.namespace, name: to.name, key: PASSWORD_KEY };
  }

  /** Connection details of a resource that does not exist yet: a new password, unless one is published. */
  async absent(mr: ManagedResource<F, A>, userRef: SecretKeySelector | undefined) {
    const at = this.#publishedAt(mr);
    if (userRef || !at || mr.metadata.deletionTimestamp) return undefined;
    // An earlier, interrupted create may already have used the published one: keep it.
    if ((await this.#tryRead(at)) !== undefined) return undefined;
    return { [PASSWORD_KEY]: strongPassword() } satisfies ConnectionDetails;
  }

  /** The password to create with: the user's, or the generated one read back from the connection Secret. */
  async forCreate(mr: ManagedResource<F, A>, userRef: SecretKeySelector | undefined): Promise<string> {
    if (userRef) return this.#fromUser(userRef);
    const at = this.#publishedAt(mr);
    if (!at) {
      throw new InvalidSpecError(
        `a generated password is kept only in the connection Secret: set spec.writeConnectionSecretToRef or spec.forProvider.${this.#field}`,
      );
    }
    const generated = await this.#tryRead(at);
    // Never create a server whose password nobody could read back.
    if (generated === undefined)
      throw new Error("the generated password is not in the connection Secret yet; retrying");
    return generated;
  }

  /** Rotation: a user password that differs from the published one makes the observation out of date. */
  async observe(
    mr: ManagedResource<F, A>,
    userRef: SecretKeySelector | undefined,
    obs: ExternalObservation<F, A>,
  ) {
    const at = this.#publishedAt(mr);
    if (!userRef || !at) return;
    const wanted = await this.#fromUser(userRef);
    if ((await this.#tryRead(at)) === wanted) return;
    const uid = mr.metadata.uid ?? "";
    if (uid && lastSet.get(uid) === mac(uid, wanted)) {
      // This process set it already and the cached Secret read predates that: publish, don't set again.
      obs.connectionDetails = { ...obs.connectionDetails, [PASSWORD_KEY]: wanted };
      return;
    }
    this.#pending.set(obs, wanted);
    obs.resourceUpToDate = false;
  }

  /** The password observe() found must be set, if any. */
  pending(obs: ExternalObservation<F, A>): string | undefined {
    return this.#pending.get(obs);
  }

  /** Records that `password` was just set on the resource. */
  wasSet(mr: ManagedResource<F, A>, password: string) {
    const uid = mr.metadata.uid;
    if (!uid) return;
    if (lastSet.size > 4096) lastSet.clear();
    lastSet.set(uid, mac(uid, password));
  }
}
