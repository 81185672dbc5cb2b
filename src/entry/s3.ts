/**
 * `switchboard/media/s3`: media kept as objects in an S3 bucket (AWS, MinIO, R2…). Its own
 * entry, because importing it loads the AWS SDK.
 */
export { s3MediaStore } from "../layers/media/mediaStoreLayers.js"
export { parseS3Url, type S3MediaStoreOptions } from "../layers/media/S3MediaStore.js"
