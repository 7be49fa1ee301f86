/** The slice of OpenAPI 3.1 this service uses; schemas are JSON Schema 2020-12 objects. */
export type Schema = Record<string, unknown>;

export interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header';
  required?: boolean;
  description?: string;
  schema: Schema;
  example?: unknown;
}

export interface Response {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema: Schema; example?: unknown }>;
}

export interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  security?: Record<string, string[]>[];
  parameters?: (Parameter | { $ref: string })[];
  requestBody?: { required: boolean; content: Record<string, { schema: Schema; example?: unknown }> };
  responses: Record<string, Response>;
}

type PathItem = Partial<Record<'get' | 'post' | 'put' | 'patch' | 'delete', Operation>>;
export type Paths = Record<string, PathItem>;

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
export const paramRef = (name: string) => ({ $ref: `#/components/parameters/${name}` });
