import { defineResource } from 'organism';
import { RED_PIXEL_PNG } from '../lib/media.ts';

/** How often test://watched-resource changes, ms: subscribers are told each time. */
const WATCH_EVERY_MS = 1000;

/** The suite's resources (conformance: resources-*), each with defineResource. */
export default [
  defineResource({
    uri: 'test://static-text',
    name: 'static-text',
    description: 'A fixed text (conformance: resources-read-text).',
    mimeType: 'text/plain',
    read: () => 'This is the content of the static text resource.',
  }),
  defineResource({
    uri: 'test://static-binary',
    name: 'static-binary',
    description: 'A 1x1 red PNG (conformance: resources-read-binary).',
    mimeType: 'image/png',
    read: () => Buffer.from(RED_PIXEL_PNG, 'base64'),
  }),
  defineResource({
    uriTemplate: 'test://template/{id}/data',
    name: 'template-data',
    description: 'Data for one id, from a resource template (conformance: resources-templates-read).',
    mimeType: 'application/json',
    read: ({ id }) => JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
  }),
  defineResource({
    uri: 'test://watched-resource',
    name: 'watched-resource',
    description: 'Changes every second; subscribers are told (conformance: resources-subscribe).',
    mimeType: 'text/plain',
    read: () => `Watched resource, read at ${new Date().toISOString()}`,
    watch: (changed) => {
      const timer = setInterval(() => changed(), WATCH_EVERY_MS);
      timer.unref();
      return () => clearInterval(timer);
    },
  }),
];
