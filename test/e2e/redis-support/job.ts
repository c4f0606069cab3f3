/** The payload of the scale-out tests' listeners: `<tag><n>…</n></tag>`, job n. */
export function jobPayload(tag: string) {
  return {
    tag,
    schema: {
      type: 'object',
      properties: { n: { type: 'integer' } },
      required: ['n'],
      additionalProperties: false,
    },
  } as const;
}
