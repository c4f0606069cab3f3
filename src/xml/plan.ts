/**
 * What a listener's JSON Schema says of each position of its payload, reduced to the facts the
 * codec (codec.ts) needs, and the rule by which such a position reads a leaf's text.
 */
import type { JsonSchema } from './json-schema.ts';

/** What one schema position accepts, reduced to the facts the codec needs. */
export interface Plan {
  any: boolean;
  str: boolean;
  num: boolean;
  bool: boolean;
  nul: boolean;
  obj: boolean;
  arr: boolean;
  /** Properties in schema order (encode writes them in this order, matching the XSD sequence). */
  props: Map<string, Plan> | null;
  /**
   * The same as two lists, made at the first encode (the plan is complete by then): walking a
   * Map's entries made an array a property, ~4 % of a hop in memory (profiled).
   */
  propKeys: string[] | null;
  propPlans: Plan[] | null;
  /** Plan for properties the schema does not name (additionalProperties schema), else generic. */
  extra: Plan;
  items: Plan;
}

/** A plan that accepts nothing yet (`any` aside); unnamed properties and items follow `rest`, else itself. */
function blankPlan(any: boolean, rest?: Plan): Plan {
  // extra and items are set right below: a plan may be its own (GENERIC is, at any depth).
  const plan = {
    any,
    str: false,
    num: false,
    bool: false,
    nul: false,
    obj: false,
    arr: false,
    props: null,
    propKeys: null,
    propPlans: null,
  } as Plan;
  plan.extra = rest ?? plan;
  plan.items = rest ?? plan;
  return plan;
}

/** Anything goes, at any depth. */
export const GENERIC: Plan = blankPlan(true);

const plans = new WeakMap<object, Plan>();

function isSchema(v: unknown): v is JsonSchema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function jsonTypeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'object' ? 'object' : typeof v;
}

/** Schema -> plan, cached by schema object. Cycles are safe: the plan is cached before it is filled. */
export function planFor(schema: unknown): Plan {
  if (!isSchema(schema)) return GENERIC;
  const cached = plans.get(schema);
  if (cached !== undefined) return cached;
  const plan = blankPlan(false, GENERIC);
  plans.set(schema, plan);
  fillPlan(plan, schema);
  if (!(plan.str || plan.num || plan.bool || plan.nul || plan.obj || plan.arr)) plan.any = true;
  return plan;
}

function fillPlan(plan: Plan, schema: JsonSchema): void {
  const types = new Set<string>();
  const t = schema.type;
  if (typeof t === 'string') types.add(t);
  else if (Array.isArray(t)) for (const x of t) if (typeof x === 'string') types.add(x);
  if (types.size === 0) {
    if (
      isSchema(schema.properties) ||
      schema.required !== undefined ||
      schema.additionalProperties !== undefined
    ) {
      types.add('object');
    }
    if (schema.items !== undefined || schema.prefixItems !== undefined) types.add('array');
    if (Array.isArray(schema.enum)) for (const v of schema.enum) types.add(jsonTypeOf(v));
    if ('const' in schema) types.add(jsonTypeOf(schema.const));
  }
  for (const type of types) {
    if (type === 'string') plan.str = true;
    else if (type === 'number' || type === 'integer') plan.num = true;
    else if (type === 'boolean') plan.bool = true;
    else if (type === 'null') plan.nul = true;
    else if (type === 'object') plan.obj = true;
    else if (type === 'array') plan.arr = true;
  }
  if (isSchema(schema.properties)) {
    plan.props = new Map();
    for (const [key, sub] of Object.entries(schema.properties)) plan.props.set(key, planFor(sub));
  }
  if (isSchema(schema.additionalProperties)) plan.extra = planFor(schema.additionalProperties);
  if (isSchema(schema.items)) plan.items = planFor(schema.items);
  // Combinators: merge what the branches say (first definition of a property wins).
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (!Array.isArray(branches)) continue;
    for (const branch of branches) {
      if (!isSchema(branch)) continue;
      const sub = planFor(branch);
      if (types.size === 0) {
        plan.str ||= sub.str;
        plan.num ||= sub.num;
        plan.bool ||= sub.bool;
        plan.nul ||= sub.nul;
        plan.obj ||= sub.obj;
        plan.arr ||= sub.arr;
      }
      if (sub.props !== null) {
        plan.props ??= new Map();
        for (const [k, v] of sub.props) if (!plan.props.has(k)) plan.props.set(k, v);
      }
      if (plan.items === GENERIC) plan.items = sub.items;
    }
  }
}

const NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

/** Assigns without ever touching the prototype: an element may be called `__proto__`. */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

export function coerceText(text: string, plan: Plan): unknown {
  if (plan.any || !(plan.num || plan.bool || plan.nul || plan.obj || plan.arr)) return text;
  const t = text.trim();
  if (plan.num && NUMBER.test(t)) return Number(t);
  if (plan.bool) {
    if (t === 'true' || t === '1') return true;
    if (t === 'false' || t === '0') return false;
  }
  if (t === '' && !plan.str) {
    if (plan.nul) return null;
    if (plan.obj) return {};
    if (plan.arr) return [];
  }
  return text;
}

/** What an element with text and no children or attributes decodes to (the encoder's leaves). */
export function decodeLeaf(text: string, plan: Plan): unknown {
  if (plan.any) return text;
  if (plan.obj && !plan.str) return {};
  if (plan.arr && !plan.str && !plan.num && !plan.bool) return [];
  return coerceText(text, plan);
}
