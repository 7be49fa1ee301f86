import { shapeOf, type ViewOf } from '../../core/shape';
import { TenantPostSchema, type TenantPost } from './tenant-post.entity';

/**
 * A tenant post as it leaves the service: the reads' select list, row and view and the REST
 * JSON's keys (tenant-post.repository.ts) follow from this list and the entity (core/shape.ts).
 */
export const tenantPostShape = shapeOf(TenantPostSchema, ['id', 'tenantId', 'title', 'body', 'createdAt', 'updatedAt']);

export type TenantPostView = ViewOf<typeof tenantPostShape>;

export const presentTenantPost = (p: TenantPost): TenantPostView => tenantPostShape.present(p);
