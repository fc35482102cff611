// Building blocks of the answer schemas (components, see src/http/openapi/route-docs.ts).
import { type TArray, type TNull, type TSchema, type TString, type TUnion, Type } from '@sinclair/typebox';

export { component } from '../openapi/route-docs.js';

export const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);
export const Enum = (values: readonly string[], opts: Record<string, unknown> = {}) =>
  Type.String({ enum: [...values], ...opts });
export const Time = (description?: string) =>
  Type.String({ format: 'date-time', ...(description ? { description } : {}) });
export const NullableTime = (description?: string) => Nullable(Time(description));
export const Id = (description?: string) => Type.String({ format: 'uuid', ...(description ? { description } : {}) });
/** A newest-first page: the items under `items`, and the cursor of the next page. */
export const Page = <K extends string, T extends TSchema>(items: K, item: T) =>
  Type.Object({
    [items]: Type.Array(item),
    nextCursor: Nullable(Type.String({ description: 'Pass as `cursor` for the next page; null on the last page.' })),
  } as { [P in K]: TArray<T> } & { nextCursor: TUnion<[TString, TNull]> });
