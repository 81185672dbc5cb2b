import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ApiKey, CreatedApiKey } from "../domain/ApiKey.js"
import { CreateApiKeyRequest, UpdateApiKeyRequest } from "../domain/ApiKeyRequests.js"
import { AuditOutcome, AuditRecord } from "../domain/Audit.js"
import { Authentication } from "./Authentication.js"
import { RequiredRole } from "./Endpoints.js"
import { ListBody, PageParams } from "./Pagination.js"

/** API keys and the audit log (the `apiKeys` and `audit` groups of SwitchboardApi in ./Api.ts); admin keys only. */

const keyPath = Schema.Struct({ keyId: Schema.String })

export class ApiKeysGroup extends HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.get("list", "/auth/api-keys").setUrlParams(Schema.Struct(PageParams)).addSuccess(ListBody(ApiKey))
      .annotate(OpenApi.Summary, "List API keys")
      .annotate(OpenApi.Description, "Every key, without the keys themselves.")
  )
  .add(
    HttpApiEndpoint.post("create", "/auth/api-keys")
      .setPayload(CreateApiKeyRequest)
      .addSuccess(CreatedApiKey, { status: 201 })
      .annotate(OpenApi.Description, "Creates a key. The key itself is in this answer only; the gateway keeps its hash.")
      .annotate(OpenApi.Summary, "Create an API key")
  )
  .add(
    HttpApiEndpoint.get("get", "/auth/api-keys/:keyId").setPath(keyPath).addSuccess(ApiKey)
      .annotate(OpenApi.Summary, "Get an API key")
      .annotate(OpenApi.Description, "One key's name, role, limits, expiry and last use.")
  )
  .add(
    HttpApiEndpoint.put("update", "/auth/api-keys/:keyId").setPath(keyPath).setPayload(UpdateApiKeyRequest).addSuccess(ApiKey)
      .annotate(OpenApi.Summary, "Update an API key")
      .annotate(OpenApi.Description, "Changes the fields given and keeps the others; 409 LAST_ADMIN_KEY when that would leave no working admin key.")
  )
  .add(
    HttpApiEndpoint.post("revoke", "/auth/api-keys/:keyId/revoke").setPath(keyPath).addSuccess(ApiKey)
      .annotate(OpenApi.Summary, "Revoke an API key")
      .annotate(OpenApi.Description, "Disables the key at once and keeps its record; 409 LAST_ADMIN_KEY when it is the last working admin key.")
  )
  .add(
    HttpApiEndpoint.del("remove", "/auth/api-keys/:keyId").setPath(keyPath).addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Delete an API key")
      .annotate(OpenApi.Description, "Deletes the key; 409 LAST_ADMIN_KEY when it is the last working admin key.")
  )
  .annotateEndpoints(RequiredRole, "admin")
  .annotate(OpenApi.Description, "API keys with roles (viewer, operator, admin), session and address limits. Admin only.")
  .middleware(Authentication)
{}

export class AuditGroup extends HttpApiGroup.make("audit")
  .add(
    HttpApiEndpoint.get("list", "/audit")
      .setUrlParams(Schema.Struct({
        ...PageParams,
        keyId: Schema.optional(Schema.String),
        sessionId: Schema.optional(Schema.String),
        // on the value, not the field: with page/limit (read from text) the document describes the wire side
        action: Schema.optional(Schema.String.annotations({ description: "e.g. sessions.start, apiKeys.create" })),
        outcome: Schema.optional(AuditOutcome),
        since: Schema.optional(Schema.DateTimeUtc),
        until: Schema.optional(Schema.DateTimeUtc)
      }))
      .addSuccess(ListBody(AuditRecord))
      .annotate(OpenApi.Description, "Every change and every refused request, newest first. Admin only.")
      .annotate(OpenApi.Summary, "List the audit log")
  )
  .annotateEndpoints(RequiredRole, "admin")
  .middleware(Authentication)
{}
