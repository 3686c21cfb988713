import type { RestRouter } from '../../rest/router.js';
import { collection } from '../../rest/collection.js';
import { pageParams } from '../../lib/pagination.js';
import { listTemplates, templateView } from './templates.service.js';

export function registerTemplateRoutes(router: RestRouter): void {
  router.on('GET', '/templates', async ({ ctx, url }) => collection(await listTemplates(ctx, pageParams(url.searchParams)), templateView));
}
