// The document types ingestion understands, by the media type recorded on the
// document. Anything else is refused at upload with 415.
export const MEDIA_TYPES = {
  text: 'text/plain',
  markdown: 'text/markdown',
  html: 'text/html',
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  csv: 'text/csv',
  json: 'application/json',
} as const;

export type MediaType = (typeof MEDIA_TYPES)[keyof typeof MEDIA_TYPES];

export const SUPPORTED_MEDIA_TYPES: readonly MediaType[] = Object.values(MEDIA_TYPES);
