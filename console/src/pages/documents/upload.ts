// One file to POST /api/os/collections/{id}/documents with XMLHttpRequest, because
// fetch cannot report upload progress. One request per file: the API stores all files
// of a request or none, so one refused file must not take the others down with it.
import type { Document } from '../../../../src/areas/os/documents/schemas.js';
import { authorization } from '../../api/client.js';
import { ApiError, type Problem } from '../../api/problem.js';
import { refresh } from '../../api/session.js';

export interface Uploaded {
  status: number;
  documents: Document[];
}

function send(path: string, file: File, onProgress: (loaded: number, total: number) => void): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', path);
    for (const [name, value] of Object.entries(authorization())) request.setRequestHeader(name, value);
    request.upload.onprogress = (event) => onProgress(event.loaded, event.lengthComputable ? event.total : file.size);
    request.onload = () => {
      let body: unknown = null;
      try {
        body = JSON.parse(request.responseText);
      } catch {
        // Not JSON (a proxy's page): the status alone tells what happened.
      }
      resolve({ status: request.status, body });
    };
    // The server closes the connection of an upload it refuses before reading it all (over the size limit).
    request.onerror = () => reject(new ApiError({ status: 0, title: 'connection closed' }));
    const form = new FormData();
    form.append('file', file, file.name);
    request.send(form);
  });
}

/** Uploads `file`; on a 401 refreshes the session once and tries again. Throws ApiError when refused. */
export async function uploadFile(collectionId: string, file: File, onProgress: (loaded: number, total: number) => void): Promise<Uploaded> {
  const path = `/api/os/collections/${encodeURIComponent(collectionId)}/documents`;
  let answer = await send(path, file, onProgress);
  if (answer.status === 401 && (await refresh())) answer = await send(path, file, onProgress);
  if (answer.status >= 200 && answer.status < 300) {
    const documents = (answer.body as { data?: Document[] } | null)?.data ?? [];
    return { status: answer.status, documents };
  }
  const problem = (answer.body ?? {}) as Partial<Problem>;
  throw new ApiError({ ...problem, status: answer.status });
}
