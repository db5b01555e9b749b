// Credentials by key in a configuration map (Monitoring NotificationChannel's `labels`: a Slack `auth_token`,
// a PagerDuty `service_key`, a webhook's `password`; keys from Google's Magic Modules). They are read from
// Secret keys (`sensitiveLabels.<name>SecretRef`) and written into the map only in a request; Google answers
// them obfuscated, so they are taken out of every answer before it is compared, late-initialized or shown.
import { InvalidSpecError } from "../../../api/external.ts";
import type { GoogleKindSpec } from "../../../api/googleapis/spec.ts";
import { isObject, type Json } from "../../../api/json.ts";

/** A resource as Google answers it, without the map's credential keys (what is compared and reported). */
export function fromGoogle(spec: GoogleKindSpec, resource: Json): Json {
  const s = spec.google.sensitiveLabels;
  if (!s || !isObject(resource[s.map])) return resource;
  const keys = new Set(Object.values(s.keys));
  const map = Object.fromEntries(Object.entries(resource[s.map] as Json).filter(([k]) => !keys.has(k)));
  return { ...resource, [s.map]: map };
}

/**
 * A request body with the resolved `sensitiveLabels` moved into the map under their keys. A map written in
 * the spec with a credential key of its own is refused: the value would be in the spec as text.
 */
export function toGoogle(spec: GoogleKindSpec, body: Json): Json {
  const s = spec.google.sensitiveLabels;
  if (!s) return body;
  const { sensitiveLabels, ...rest } = body;
  const map = isObject(rest[s.map]) ? (rest[s.map] as Json) : undefined;
  for (const [name, key] of Object.entries(s.keys))
    if (map && key in map)
      throw new InvalidSpecError(
        `spec.forProvider.${s.map}.${key} is a credential: set spec.forProvider.sensitiveLabels.${name}SecretRef instead`,
      );
  const values = Object.entries(s.keys).flatMap(([name, key]) =>
    isObject(sensitiveLabels) && typeof sensitiveLabels[name] === "string"
      ? [[key, sensitiveLabels[name]]]
      : [],
  );
  return values.length > 0 ? { ...rest, [s.map]: { ...map, ...Object.fromEntries(values) } } : rest;
}
