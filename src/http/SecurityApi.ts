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
  .add(HttpApiEndpoint.get("list", "/auth/api-keys").setUrlParams(Schema.Struct(PageParams)).addSuccess(ListBody(ApiKey)))
  .add(
    HttpApiEndpoint.post("create", "/auth/api-keys")
      .setPayload(CreateApiKeyRequest)
      .addSuccess(CreatedApiKey, { status: 201 })
      .annotate(OpenApi.Description, "Creates a key. The key itself is in this answer only; the gateway keeps its hash.")
  )
  .add(HttpApiEndpoint.get("get", "/auth/api-keys/:keyId").setPath(keyPath).addSuccess(ApiKey))
  .add(HttpApiEndpoint.put("update", "/auth/api-keys/:keyId").setPath(keyPath).setPayload(UpdateApiKeyRequest).addSuccess(ApiKey))
  .add(HttpApiEndpoint.post("revoke", "/auth/api-keys/:keyId/revoke").setPath(keyPath).addSuccess(ApiKey))
  .add(HttpApiEndpoint.del("remove", "/auth/api-keys/:keyId").setPath(keyPath).addSuccess(HttpApiSchema.NoContent))
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
        action: Schema.optional(Schema.String).annotations({ description: "e.g. sessions.start, apiKeys.create" }),
        outcome: Schema.optional(AuditOutcome),
        since: Schema.optional(Schema.DateTimeUtc),
        until: Schema.optional(Schema.DateTimeUtc)
      }))
      .addSuccess(ListBody(AuditRecord))
      .annotate(OpenApi.Description, "Every change and every refused request, newest first. Admin only.")
  )
  .annotateEndpoints(RequiredRole, "admin")
  .middleware(Authentication)
{}
