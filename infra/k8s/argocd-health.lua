-- Argo CD health of a driftless object (managed resource of either shape, claim, ProviderConfig), from the
-- Ready and Synced conditions every driftless reconciler writes (each carrying observedGeneration).
-- Argo CD runs this without Lua's standard libraries: only base functions, so no string.* here.
hs = { status = "Progressing", message = "waiting for its first reconcile" }
local function condition(t)
  if obj.status == nil or obj.status.conditions == nil then return nil end
  for _, c in ipairs(obj.status.conditions) do
    if c.type == t then return c end
  end
  return nil
end
local function said(c)
  if c.message ~= nil and c.message ~= "" then return c.reason .. ": " .. c.message end
  return c.reason
end
local ready = condition("Ready")
local synced = condition("Synced")
local annotations = (obj.metadata ~= nil and obj.metadata.annotations) or {}
if obj.metadata ~= nil and obj.metadata.deletionTimestamp ~= nil then
  hs.status = "Progressing"
  hs.message = "deleting"
  if ready ~= nil and ready.status ~= "True" then hs.message = "deleting: " .. said(ready) end
  return hs
end
if annotations["crossplane.io/paused"] == "true" or (synced ~= nil and synced.reason == "ReconcilePaused") then
  hs.status = "Suspended"
  hs.message = "reconciliation is paused (crossplane.io/paused)"
  return hs
end
if ready == nil and synced == nil then return hs end
local generation = obj.metadata and obj.metadata.generation
local seen = (ready and ready.observedGeneration) or (synced and synced.observedGeneration)
if generation ~= nil and seen ~= nil and seen < generation then
  hs.status = "Progressing"
  hs.message = "generation " .. tostring(generation) .. " not reconciled yet (status is of " .. tostring(seen) .. ")"
  return hs
end
if synced ~= nil and synced.status == "False" then
  hs.status = "Degraded"
  hs.message = said(synced)
  return hs
end
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = said(ready)
  return hs
end
if ready ~= nil then hs.message = said(ready) else hs.message = "synced; waiting for Ready" end
return hs
