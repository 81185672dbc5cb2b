const wordprocessing = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
const spreadsheet = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
const presentation = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
const odt = "application/vnd.oasis.opendocument.text"
const ods = "application/vnd.oasis.opendocument.spreadsheet"
const odp = "application/vnd.oasis.opendocument.presentation"

/** Common document types by file extension: above all the text formats, which have no magic number. */
const typesByExtension: Readonly<Record<string, string>> = {
  txt: "text/plain",
  log: "text/plain",
  csv: "text/csv",
  tsv: "text/tab-separated-values",
  json: "application/json",
  xml: "application/xml",
  html: "text/html",
  htm: "text/html",
  md: "text/markdown",
  yaml: "application/yaml",
  yml: "application/yaml",
  ics: "text/calendar",
  vcf: "text/vcard",
  svg: "image/svg+xml",
  rtf: "application/rtf",
  doc: "application/msword",
  xls: "application/vnd.ms-excel",
  ppt: "application/vnd.ms-powerpoint",
  docx: wordprocessing,
  xlsx: spreadsheet,
  pptx: presentation,
  odt,
  ods,
  odp,
  epub: "application/epub+zip"
}

/**
 * Containers the sniffer may name without seeing what is inside (every .doc/.xls/.ppt is
 * "x-cfb"; a .docx whose parts are laid out unusually is just "zip"), with the formats built on each.
 */
const formatsByContainer: Readonly<Record<string, ReadonlyArray<string>>> = {
  "application/zip": [wordprocessing, spreadsheet, presentation, odt, ods, odp, "application/epub+zip"],
  "application/x-cfb": ["application/msword", "application/vnd.ms-excel", "application/vnd.ms-powerpoint"]
}

export const typeOfFilename = (filename: string | null): string | undefined => {
  const dot = filename?.lastIndexOf(".") ?? -1
  return dot > 0 ? typesByExtension[filename!.slice(dot + 1).toLowerCase()] : undefined
}

export const extensionOfType = (mimetype: string): string | undefined =>
  Object.keys(typesByExtension).find((extension) => typesByExtension[extension] === mimetype)

/** Whether `format` is a format stored in the `container` the sniffer found. */
export const isBuiltOn = (format: string | undefined, container: string): format is string =>
  format !== undefined && (formatsByContainer[container]?.includes(format) ?? false)

// RFC 6838 restricted names; parameters (`; charset=…`) are dropped.
const mimetypeSyntax = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/

/** The `type/subtype` of a declared type, lower-cased; `undefined` unless it is well-formed. */
export const essenceOf = (declared: string | undefined): string | undefined => {
  const essence = declared?.split(";")[0]?.trim().toLowerCase()
  return essence !== undefined && mimetypeSyntax.test(essence) ? essence : undefined
}
