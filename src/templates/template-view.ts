// The spec's Template shape, from a template as the provider's management API returns it.
import { parameterCountOf, type ParameterFormat, variablesOf } from './template-definition.js';

/** The fields asked of the provider: exactly what the Template shape needs. */
export const TEMPLATE_FIELDS =
  'id,name,language,category,status,rejected_reason,parameter_format,components,quality_score';

export type Template = {
  id: string;
  name: string;
  language: string;
  category: string;
  status: string;
  rejectedReason: string | null;
  parameterFormat: ParameterFormat;
  parameterCount: number;
  /** As the provider returns them: objects. */
  components: Record<string, unknown>[];
  qualityScore?: { score: string; date: string | null };
};

const str = (v: unknown): string | null =>
  typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null;

const bodyTextOf = (components: unknown[]): string => {
  const body = components.find(
    (c) => typeof c === 'object' && c !== null && String((c as { type?: unknown }).type).toUpperCase() === 'BODY',
  ) as { text?: unknown } | undefined;
  return typeof body?.text === 'string' ? body.text : '';
};

export function toTemplate(item: Record<string, unknown>): Template {
  const components = Array.isArray(item.components) ? (item.components as Record<string, unknown>[]) : [];
  const body = bodyTextOf(components);
  const format = str(item.parameter_format)?.toUpperCase();
  // Older templates may lack parameter_format: positional is the provider's default.
  const parameterFormat: ParameterFormat =
    format === 'NAMED' || format === 'POSITIONAL'
      ? format
      : variablesOf(body).some((v) => !/^\d+$/.test(v))
        ? 'NAMED'
        : 'POSITIONAL';
  const rejected = str(item.rejected_reason);
  const template: Template = {
    id: str(item.id) ?? '',
    name: str(item.name) ?? '',
    language: str(item.language) ?? '',
    category: str(item.category) ?? '',
    status: str(item.status) ?? '',
    // The provider says NONE for templates that were not rejected.
    rejectedReason: rejected === null || rejected === 'NONE' ? null : rejected,
    parameterFormat,
    parameterCount: parameterCountOf(body),
    components,
  };
  const quality = item.quality_score as { score?: unknown; date?: unknown } | undefined;
  const score = str(quality?.score);
  if (score !== null) {
    const date =
      typeof quality?.date === 'number' && Number.isFinite(quality.date) ? new Date(quality.date * 1000) : null;
    template.qualityScore = { score, date: date && !Number.isNaN(date.getTime()) ? date.toISOString() : null };
  }
  return template;
}
