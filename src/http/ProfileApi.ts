import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { UnsupportedMediaType } from "../domain/Errors.js"
import { Profile, ProfileAboutRequest, ProfileNameRequest } from "../domain/Profile.js"
import { Authentication } from "./Authentication.js"
import { RequiredRole } from "./Endpoints.js"
import { PicturePayload } from "./mediaForms.js"
import { wireError } from "./wireError.js"

/**
 * The session's own WhatsApp profile (its group of SwitchboardApi in ./Api.ts). Every operation
 * may answer 503 (the Store or the media store cannot be reached) and 413 (a body over
 * BODY_MAX_BYTES), declared on SwitchboardApi with 400/404/409; 401/403/429 come with Authentication.
 */

const sessionPath = Schema.Struct({ sessionId: Schema.String })
const profileRoute = "/sessions/:sessionId/profile"

/**
 * A picture upload (profile or group): JSON `{media}` or multipart; refusals as for media sends
 * (415 here; 413 and 503 come with SwitchboardApi).
 */
export const pictureUpload = <const Name extends string>(name: Name, path: `/${string}`) =>
  HttpApiEndpoint.put(name, path).annotate(RequiredRole, "operator")
    .setPayload(PicturePayload)
    .addError(wireError(UnsupportedMediaType))
    .annotate(OpenApi.Description, "Any JPEG, PNG or WebP as JSON {media} (url or base64) or multipart (a file part); cropped to a centred square and scaled to WhatsApp's 640×640 JPEG.")

export class ProfileGroup extends HttpApiGroup.make("profile")
  .add(
    HttpApiEndpoint.get("get", profileRoute).annotate(RequiredRole, "viewer").setPath(sessionPath).addSuccess(Profile)
      .annotate(OpenApi.Summary, "Get the profile")
      .annotate(OpenApi.Description, "The session's own push name, about text and picture URL.")
  )
  .add(
    HttpApiEndpoint.put("setName", `${profileRoute}/name`).annotate(RequiredRole, "operator").setPath(sessionPath).setPayload(ProfileNameRequest).addSuccess(Profile)
      .annotate(OpenApi.Summary, "Set the push name")
      .annotate(OpenApi.Description, "Changes the name the account shows to others; answers the profile.")
  )
  .add(
    HttpApiEndpoint.put("setAbout", `${profileRoute}/about`).annotate(RequiredRole, "operator").setPath(sessionPath).setPayload(ProfileAboutRequest).addSuccess(Profile)
      .annotate(OpenApi.Summary, "Set the about text")
      .annotate(OpenApi.Description, "Changes the account's about text; answers the profile.")
  )
  .add(
    pictureUpload("setPicture", `${profileRoute}/picture`).setPath(sessionPath).addSuccess(Profile)
      .annotate(OpenApi.Summary, "Set the profile picture")
  )
  .add(
    HttpApiEndpoint.del("removePicture", `${profileRoute}/picture`).annotate(RequiredRole, "operator").setPath(sessionPath).addSuccess(Profile)
      .annotate(OpenApi.Summary, "Remove the profile picture")
      .annotate(OpenApi.Description, "Removes the account's picture; answers the profile.")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "The session's own profile: its push name, about text and picture. The session must be ready.")
{}
