/** The `context` object model: exactly API Management's members (reference §3.3), nothing of our TypeScript API. */
import {
  ApiInfo,
  DeploymentInfo,
  GroupInfo,
  LastErrorInfo,
  MessageBody,
  OperationInfo,
  PolicyContext,
  ProductInfo,
  QueryCollection,
  RequestModel,
  ResponseModel,
  SubscriptionInfo,
  UrlModel,
  UserInfo,
} from '../context.js';
import { toDotNetStringRt } from '../runtime/convert.js';
import { CsException, type CsType, defineType, prop, type Rt } from '../runtime/core.js';
import { makeEnum } from '../runtime/enum.js';
import { CsDateTime } from '../runtime/values.js';
import { defineEnumType } from './enums.js';
import { bool } from './helpers.js';
import { parseJson } from './json/parse.js';
import { JArray, JObject } from './json/tokens.js';
import { parseXDocument } from './xml/parse.js';

const date = (d: Date | null): CsDateTime | null => (d ? CsDateTime.fromDate(d, 'Utc') : null);

export const UrlType = defineType({
  name: 'IUrl',
  classes: [UrlModel],
  props: {
    Scheme: prop((u: UrlModel) => u.scheme),
    Host: prop((u: UrlModel) => u.host),
    Port: prop((u: UrlModel) => u.port),
    Path: prop((u: UrlModel) => u.path),
    Query: prop((u: UrlModel) => u.query),
    QueryString: prop((u: UrlModel) => u.queryString),
  },
  methods: { ToString: (_rt, u: UrlModel) => u.toString() },
});

/** IMessageBody.As<T>(preserveContent): the body's bytes decoded as T. */
function bodyAs(rt: Rt, body: MessageBody, preserve: boolean, type: CsType | undefined): unknown {
  const bytes = body.read(preserve);
  const name = type?.info.name ?? 'String';
  if (type && type.arrayRank === 1 && type.args[0]?.info.name === 'Byte') return Buffer.from(bytes);
  const text = bytes.toString('utf8').replace(/^\ufeff/, '');
  switch (name) {
    case 'String':
      return text;
    case 'JObject': {
      const t = parseJson(text, rt);
      if (!(t instanceof JObject))
        throw new CsException(
          'JsonReaderException',
          'Error reading JObject from JsonReader: the body is not a JSON object.',
        );
      return t;
    }
    case 'JArray': {
      const t = parseJson(text, rt);
      if (!(t instanceof JArray))
        throw new CsException(
          'JsonReaderException',
          'Error reading JArray from JsonReader: the body is not a JSON array.',
        );
      return t;
    }
    case 'JToken':
      return parseJson(text, rt);
    case 'XDocument':
    case 'XNode':
      return parseXDocument(text);
    case 'XElement':
      return parseXDocument(text).root;
    default:
      throw new CsException(
        'InvalidOperationException',
        `Body.As<${name}>() is not supported; use string, byte[], JObject, JArray, JToken, XDocument or XElement`,
      );
  }
}

export const BodyType = defineType({
  name: 'IMessageBody',
  classes: [MessageBody],
  methods: {
    As: (rt, self: MessageBody, args, typeArgs) =>
      bodyAs(rt, self, args.length > 0 ? bool(args[0], 'preserveContent') : false, typeArgs[0]),
    AsFormUrlEncodedContent: (_rt, self: MessageBody, args) => {
      const text = self.read(args.length > 0 ? bool(args[0], 'preserveContent') : false).toString('utf8');
      const form = new QueryCollection();
      for (const [k, v] of new URLSearchParams(text)) form.append(k, v);
      return form;
    },
  },
});

export const RequestType = defineType({
  name: 'IRequest',
  classes: [RequestModel],
  props: {
    Method: prop((r: RequestModel) => r.method),
    Url: prop((r: RequestModel) => r.backendUrl),
    OriginalUrl: prop((r: RequestModel) => r.originalUrl),
    Headers: prop((r: RequestModel) => r.headers),
    Body: prop((r: RequestModel) => r.body),
    IpAddress: prop((r: RequestModel) => r.ipAddress),
    MatchedParameters: prop((r: RequestModel) => r.matchedParameters),
    Certificate: prop((r: RequestModel) => r.certificate ?? null),
    PrivateEndpointConnection: prop(() => null),
  },
});

export const ResponseType = defineType({
  name: 'IResponse',
  aliases: ['Response'],
  classes: [ResponseModel],
  props: {
    StatusCode: prop((r: ResponseModel) => r.statusCode),
    StatusReason: prop((r: ResponseModel) => r.statusReason),
    Headers: prop((r: ResponseModel) => r.headers),
    Body: prop((r: ResponseModel) => r.body),
  },
});

export const LastErrorType = defineType({
  name: 'ILastError',
  classes: [LastErrorInfo],
  props: {
    Source: prop((e: LastErrorInfo) => e.source),
    Reason: prop((e: LastErrorInfo) => e.reason),
    Message: prop((e: LastErrorInfo) => e.message),
    Scope: prop((e: LastErrorInfo) => e.scope),
    Section: prop((e: LastErrorInfo) => e.section),
    Path: prop((e: LastErrorInfo) => e.path),
    PolicyId: prop((e: LastErrorInfo) => e.policyId),
  },
});

export const GroupType = defineType({
  name: 'IGroup',
  classes: [GroupInfo],
  props: { Id: prop((g: GroupInfo) => g.id), Name: prop((g: GroupInfo) => g.name) },
});

export const ApiType = defineType({
  name: 'IApi',
  classes: [ApiInfo],
  props: {
    Id: prop((a: ApiInfo) => a.id),
    Name: prop((a: ApiInfo) => a.name),
    Path: prop((a: ApiInfo) => a.path),
    Revision: prop((a: ApiInfo) => a.revision),
    Version: prop((a: ApiInfo) => a.version),
    IsCurrentRevision: prop((a: ApiInfo) => a.isCurrentRevision),
    ServiceUrl: prop((a: ApiInfo) => a.serviceUrl),
    Protocols: prop((a: ApiInfo) => [...a.protocols]),
    SubscriptionKeyParameterNames: prop(
      (a: ApiInfo) => new SubscriptionKeyNames(a.subscriptionKeyHeader, a.subscriptionKeyQuery),
    ),
  },
});

class SubscriptionKeyNames {
  constructor(
    readonly header: string,
    readonly query: string,
  ) {}
}
defineType({
  name: 'ISubscriptionKeyParameterNames',
  classes: [SubscriptionKeyNames],
  props: {
    Header: prop((s: SubscriptionKeyNames) => s.header),
    Query: prop((s: SubscriptionKeyNames) => s.query),
  },
});

export const OperationType = defineType({
  name: 'IOperation',
  classes: [OperationInfo],
  props: {
    Id: prop((o: OperationInfo) => o.id),
    Method: prop((o: OperationInfo) => o.method),
    Name: prop((o: OperationInfo) => o.name),
    UrlTemplate: prop((o: OperationInfo) => o.urlTemplate),
  },
});

const ProductState = makeEnum('ProductState', { NotPublished: 0, Published: 1 });
defineEnumType(ProductState, 'Microsoft.WindowsAzure.ApiManagement.Proxy.Gateway.Policies.Expressions');

export const ProductType = defineType({
  name: 'IProduct',
  classes: [ProductInfo],
  props: {
    Id: prop((p: ProductInfo) => p.id),
    Name: prop((p: ProductInfo) => p.name),
    ApprovalRequired: prop((p: ProductInfo) => p.approvalRequired),
    Groups: prop((p: ProductInfo) => [...p.groups]),
    Apis: prop((p: ProductInfo) => [...p.apis]),
    State: prop((p: ProductInfo) => ProductState.values.get(p.state)!),
    SubscriptionLimit: prop((p: ProductInfo) => p.subscriptionLimit),
    SubscriptionsLimit: prop((p: ProductInfo) => p.subscriptionLimit),
    SubscriptionRequired: prop((p: ProductInfo) => p.subscriptionRequired),
  },
});

export const SubscriptionType = defineType({
  name: 'ISubscription',
  classes: [SubscriptionInfo],
  props: {
    Id: prop((s: SubscriptionInfo) => s.id),
    Name: prop((s: SubscriptionInfo) => s.name),
    Key: prop((s: SubscriptionInfo) => s.key),
    PrimaryKey: prop((s: SubscriptionInfo) => s.primaryKey),
    SecondaryKey: prop((s: SubscriptionInfo) => s.secondaryKey),
    CreatedDate: prop((s: SubscriptionInfo) => date(s.createdDate)),
    CreatedTime: prop((s: SubscriptionInfo) => date(s.createdDate)),
    StartDate: prop((s: SubscriptionInfo) => date(s.startDate)),
    EndDate: prop((s: SubscriptionInfo) => date(s.endDate)),
  },
});

class UserIdentity {
  constructor(
    readonly id: string,
    readonly provider: string,
  ) {}
}
defineType({
  name: 'IUserIdentity',
  classes: [UserIdentity],
  props: { Id: prop((u: UserIdentity) => u.id), Provider: prop((u: UserIdentity) => u.provider) },
});

export const UserType = defineType({
  name: 'IUser',
  classes: [UserInfo],
  props: {
    Id: prop((u: UserInfo) => u.id),
    Email: prop((u: UserInfo) => u.email),
    FirstName: prop((u: UserInfo) => u.firstName),
    LastName: prop((u: UserInfo) => u.lastName),
    Note: prop((u: UserInfo) => u.note),
    RegistrationDate: prop((u: UserInfo) => date(u.registrationDate)),
    Groups: prop((u: UserInfo) => [...u.groups]),
    Identities: prop((u: UserInfo) => u.identities.map((i) => new UserIdentity(i.id, i.provider))),
  },
});

class GatewayInfo {
  constructor(readonly d: DeploymentInfo) {}
}
defineType({
  name: 'IGateway',
  classes: [GatewayInfo],
  props: {
    Id: prop((g: GatewayInfo) => g.d.gatewayId),
    InstanceId: prop((g: GatewayInfo) => g.d.gatewayInstanceId),
    IsManaged: prop((g: GatewayInfo) => g.d.gatewayIsManaged),
  },
});

export const DeploymentType = defineType({
  name: 'IDeployment',
  classes: [DeploymentInfo],
  props: {
    Region: prop((d: DeploymentInfo) => d.region),
    ServiceName: prop((d: DeploymentInfo) => d.serviceName),
    ServiceId: prop((d: DeploymentInfo) => d.serviceId),
    GatewayId: prop((d: DeploymentInfo) => d.gatewayId),
    Gateway: prop((d: DeploymentInfo) => new GatewayInfo(d)),
  },
});

export const ContextType = defineType({
  name: 'IContext',
  classes: [PolicyContext],
  props: {
    Request: prop((c: PolicyContext) => c.request),
    Response: prop((c: PolicyContext) => c.response),
    Variables: prop((c: PolicyContext) => c.variables),
    LastError: prop((c: PolicyContext) => c.lastError),
    Api: prop((c: PolicyContext) => c.api),
    Operation: prop((c: PolicyContext) => c.operation),
    Product: prop((c: PolicyContext) => c.product),
    Subscription: prop((c: PolicyContext) => c.subscription),
    User: prop((c: PolicyContext) => c.user),
    Deployment: prop((c: PolicyContext) => c.deployment),
    RequestId: prop((c: PolicyContext) => c.requestId),
    Timestamp: prop((c: PolicyContext) => c.timestampValue),
    Elapsed: prop((c: PolicyContext) => c.elapsed),
    Tracing: prop((c: PolicyContext) => c.tracing),
  },
  methods: {
    Trace: (rt, c: PolicyContext, args) => {
      c.onTrace(toDotNetStringRt(rt, args[0]));
      return null;
    },
  },
});
