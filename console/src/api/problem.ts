// The gateway's one error shape (problem+json), as the console receives it.
export interface Problem {
  type?: string;
  title?: string;
  status: number;
  detail?: string;
  code?: string;
  correlationId?: string;
  errors?: { field: string; message: string }[];
}

export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail ?? problem.title ?? `HTTP ${problem.status}`);
  }
  get status(): number {
    return this.problem.status;
  }
}

export async function problemOf(response: Response): Promise<ApiError> {
  const fallback: Problem = { status: response.status, title: response.statusText };
  try {
    const body = (await response.json()) as Partial<Problem>;
    return new ApiError({ ...fallback, ...body, status: response.status });
  } catch {
    return new ApiError(fallback);
  }
}
