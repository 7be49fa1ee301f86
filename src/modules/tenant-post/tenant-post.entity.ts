import { Entity, Filter, Index, Property } from '@mikro-orm/core';
import { BaseEntity } from '../../core/base.entity';
import { currentTenantId } from '../../core/context';

@Entity({ tableName: 'tenant_posts' })
// Every read is limited to the request's tenant; with no tenant in context the filter adds nothing
// (SPEC 4.4 rule 4), which is why the tenant routes require one before they read.
@Filter({
  name: 'tenant',
  default: true,
  cond: () => {
    const tenantId = currentTenantId();
    return tenantId === null ? {} : { tenantId };
  },
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
