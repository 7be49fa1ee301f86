import { defineEntity, p } from '@mikro-orm/core';
import { baseProperties } from '../../core/base.entity';
import type { TenantFilterParams } from '../../core/context';

export const TenantPostSchema = defineEntity({
  name: 'TenantPost',
  tableName: 'tenant_posts',
  properties: {
    ...baseProperties,
    tenantId: p.integer(),
    title: p.string().length(255),
    body: p.text(),
  },
  filters: {
    // Every read is limited to the request's tenant, which its fork carries as this filter's parameters
    // (core/context.ts requestFork); with no tenant the filter adds nothing, which is
    // why the tenant routes require one before they read. `args: false`: MikroORM would otherwise throw
    // "No arguments provided for filter 'tenant'" on a fork without a tenant (admin routes, jobs).
    tenant: {
      name: 'tenant',
      default: true,
      args: false,
      cond: (args: Partial<TenantFilterParams> | undefined) => (args?.tenantId == null ? {} : { tenantId: args.tenantId }),
    },
  },
  indexes: [{ name: 'tenant_posts_tenant_id_id_index', properties: ['tenantId', 'id'] }],
});

export class TenantPost extends TenantPostSchema.class {}
TenantPostSchema.setClass(TenantPost);
