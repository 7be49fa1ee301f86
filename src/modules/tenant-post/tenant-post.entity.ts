import { Entity, Filter, Index, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from '../../core/base.entity';
import type { TenantFilterParams } from '../../core/context';

@Entity({ tableName: 'tenant_posts' })
// Every read is limited to the request's tenant, which its fork carries as this filter's parameters
// (core/context.ts requestFork); with no tenant the filter adds nothing, which is
// why the tenant routes require one before they read. `args: false`: MikroORM would otherwise throw
// "No arguments provided for filter 'tenant'" on a fork without a tenant (admin routes, jobs).
@Filter({
  name: 'tenant',
  default: true,
  args: false,
  cond: (args: Partial<TenantFilterParams> | undefined) => (args?.tenantId == null ? {} : { tenantId: args.tenantId }),
})
@Index({ name: 'tenant_posts_tenant_id_id_index', properties: ['tenantId', 'id'] })
export class TenantPost extends BaseEntity {
  @Property({ type: 'integer' })
  tenantId!: number;

  @Property({ type: 'string', length: 255 })
  title!: string;

  @Property({ type: 'text' })
  body!: string;
}
