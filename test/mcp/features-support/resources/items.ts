import { defineResource } from '../../../../src/index.ts';
import { PNG } from '../tools/media.ts';

let notify: ((uri?: string) => void) | undefined;

export default [
  defineResource({
    uri: 'test://static-text',
    name: 'static text',
    description: 'A fixed text.',
    mimeType: 'text/plain',
    read: () => 'This is the content of the static text resource.',
  }),
  defineResource({
    uri: 'test://static-binary',
    name: 'static binary',
    mimeType: 'image/png',
    read: () => PNG,
  }),
  defineResource({
    uriTemplate: 'test://items/{id}/data',
    name: 'item',
    description: 'One item by id.',
    mimeType: 'application/json',
    read: ({ id }) => {
      if (!/^\d+$/.test(id ?? '')) throw new Error(`item id must be digits, got ${id}`);
      return JSON.stringify({ id, data: `Data for ID: ${id}` });
    },
    complete: { id: (v) => ['100', '101', '200'].filter((x) => x.startsWith(v)) },
  }),
  defineResource({
    uri: 'test://huge',
    name: 'huge',
    read: () => new Uint8Array(7 * 1024 * 1024),
  }),
  defineResource({
    uri: 'test://watched',
    name: 'watched',
    read: () => `now ${Date.now()}`,
    watch: (changed) => {
      notify = changed;
      const timer = setInterval(() => notify?.(), 300);
      return () => clearInterval(timer);
    },
  }),
];
