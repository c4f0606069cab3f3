/** The payload of the failing test listeners: `<tag><text>…</text></tag>`. */
export function textPayload(tag: string) {
  return {
    tag,
    schema: {
      type: 'object',
      properties: { text: { type: 'string', description: 'Anything.' } },
      required: ['text'],
      additionalProperties: false,
    },
  } as const;
}
