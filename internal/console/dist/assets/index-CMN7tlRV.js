var e,t,n,r,i,a,o,s,c,l,u=Symbol.for(`pv`),d={},f=[],p=/^m(i|n|o|s|text|space)$/,m=Array.isArray,h=f.slice,g=Object.assign;function _(e){e&&e.parentNode&&e.remove()}function v(e,t,n){var r,i,a,o={},s=arguments.length;for(a in t)a==`key`?r=t[a]:a==`ref`&&typeof e!=`function`?i=t[a]:o[a]=t[a];return s>2&&(o.children=s>3?h.call(arguments,2):n),y(e,o,r,i,null)}function y(n,r,i,a,o){var s={type:n,props:r,key:i,ref:a,__k:null,__:null,__b:0,__e:null,__c:null,constructor:u,__v:o||++t,__i:-1,__u:0};return!o&&e.vnode&&e.vnode(s),s}function b(e){return e.children}function x(e,t){this.props=e,this.context=t,this.__g=0}function S(e,t){if(t==null)return e.__&&S(e.__,e.__i+1);for(var n;t<e.__k.length;t++)if((n=e.__k[t])&&n.__e)return n.__e;return typeof e.type!=`function`||e.props.__P?null:S(e)}function C(t){var n,r=t.__v,i=r.__e,a=[],o=[],s=t.__P;s&&((n=g({constructor:u},r)).__v=r.__v+1,e.vnode&&e.vnode(n),M(s,n,r,t.__n,s.namespaceURI,32&r.__u?[i]:null,a,i||S(r),32&r.__u,o),n.__v=r.__v,n.__.__k[n.__i]=n,N(a,n,o),r.__=r.__e=null,n.__e!=i&&w(n))}function w(e){if((e=e.__)&&e.__c&&!e.props.__P)return e.__e=null,e.__k.some(function(t){return t&&(e.__e=t.__e)}),w(e)}function T(t){(8&t.__g||(t.__g|=8,n.push(t),i++))&&r==e.debounceRendering||((r=e.debounceRendering)||queueMicrotask)(E)}function E(){try{for(var e,t=1;n.length;)n.length>t&&n.sort(a),e=n.shift(),t=n.length,8&e.__g&&C(e)}finally{(i=n.length)&&(r||queueMicrotask)(E)}}function ee(e,t,n,r,i,a,o,s,c,l,u){var p,m,h,g,_,v,y=r.__k||f,b=t.length;for(c=D(n,t,y,c,b),p=0;p<b;p++)(h=n.__k[p])!=null&&(m=~h.__i&&y[h.__i]||d,h.__i=p,v=M(e,h,m,i,a,o,s,c,l,u),g=h.__e,(m.ref!=h.ref||8&m.__u)&&(m.ref&&P(m.ref,null,h,m),h.ref&&u.push(h.ref,h.__c||g,h)),_||=g,4&h.__u?(c=O(h,c,e,!m.__v),m.__e&&(m.__e=null)):typeof h.type==`function`&&v!==void 0?c=v:g&&(c=g.nextSibling),h.__u&=-21);return n.__e=_,c}function D(e,t,n,r,i){var a,o,s,c,l,d,f,p,h,g=n.length,_=g,v=0,x=0,C=e.__k=Array(i);for(a=0;a<i;a++)(o=t[a])!=null&&typeof o!=`boolean`&&typeof o!=`function`?(typeof o!=`object`||o.constructor===String?o=C[a]=y(null,o):m(o)?o=C[a]=y(b,{children:o}):o.constructor===u&&o.__b?o=C[a]=y(o.type,o.props,o.key,o.ref,o.__v):C[a]=o,c=a+v,o.__=e,o.__b=e.__b+1,s=null,~(l=o.__i=k(o,n,c,_))&&(_--,(s=n[l])&&(s.__u|=2)),s&&s.__v?(o.__u|=16,l==c-1?v--:l==c+1?v++:l!=c&&(l>c?v--:v++,x=1)):(~l||(i>g?v--:i<g&&v++),typeof o.type!=`function`&&(o.__u|=4))):C[a]=null;if(x){for(d=[],f=[],a=0;a<i;a++)if((o=C[a])&&16&o.__u){for(v=0,p=d.length;v<p;)d[h=v+p>>1]<o.__i?v=h+1:p=h;d[v]=o.__i,f[a]=v+1}for(v=d.length;a--;)f[a]&&(f[a]==v?v--:C[a].__u|=4)}if(_)for(a=0;a<g;a++)!(s=n[a])||2&s.__u||(s.__e==r&&(r=S(s)),ae(s,s));return r}function O(e,t,n,r){var i,a,o,s;if(typeof e.type==`function`){if(e.props.__P)return t;if(i=e.__k)for(a=0;a<i.length;a++)i[a]&&(i[a].__=e,t=O(i[a],t,n,!1));return t}for(t&&!t.parentNode&&(t=S(e))&&!t.parentNode&&(t=null),o=e.__e,s=t;s&&s.nodeType==8;)s=s.nextSibling;for(o!=s&&(!r&&n.moveBefore&&o.parentNode?n.moveBefore(o,t):n.insertBefore(o,t||null)),t=o;(t&&=t.nextSibling)&&t.nodeType==8&&!t.data.startsWith(`$s`););return t}function k(e,t,n,r){var i,a=e.key,o=e.type,s=t[n],c=s&&!(2&s.__u);if(s===null&&a==null||c&&a==s.key&&o==s.type)return n;if(r>+!!c){for(i=n-1;i>=0;i--)if((s=t[i])&&!(2&s.__u)&&a==s.key&&o==s.type)return i;for(i=n+1;i<t.length;i++)if((s=t[i])&&!(2&s.__u)&&a==s.key&&o==s.type)return i}return-1}function A(e,t,n){n??=``,t[0]==`-`?e.setProperty(t,n):e[t]=n}function te(e,t,n,r,i){var a,o;if(t==`style`){if(typeof n==`string`)e.style.cssText=n;else{if(typeof r==`string`&&(e.style.cssText=r=``),r)for(t in r)n&&t in n||A(e.style,t);if(n)for(t in n)r&&n[t]==r[t]||A(e.style,t,n[t])}}else if(t[0]==`o`&&t[1]==`n`)typeof n!=`function`&&(n=null),typeof r!=`function`&&(r=null),(e.__e||={})[t]=n,n&&r||(o=l[t]||(l[t]=j(t)),(e.__a||={})[t]=c,a=t!=(t=t.replace(s,`$1`)),(t=t.slice(2))[0]<`a`&&(t=t.toLowerCase()),n?e.addEventListener(t,o,a):e.removeEventListener(t,o,a));else{if(i==`http://www.w3.org/2000/svg`)t=t.replace(/xlink(H|:h)/,`h`).replace(/sName$/,`s`);else if(t!=`width`&&t!=`height`&&t!=`href`&&t!=`list`&&t!=`form`&&t!=`tabIndex`&&t!=`download`&&t!=`rowSpan`&&t!=`colSpan`&&t!=`role`&&t!=`popover`&&t in e)try{e[t]=n??``;return}catch{}if(typeof n==`function`)return;n==null||!1===n&&t[4]!=`-`?e.removeAttribute(t):e.setAttribute(t,t==`popover`&&n==1?``:n)}}function j(t){return function(n){var r=this.__e;if(r){if(r=r[t],n[o]==null)n[o]=c++;else if(n[o]<this.__a[t])return;return r(e.event?e.event(n):n)}}}function M(t,n,r,i,a,o,s,c,l,d){var p,h,v,y,C,w,T,E,D,O,k,A,te,j,M,N,P,I,L=n.type;if(n.constructor!==u)return null;128&r.__u&&(l=32&r.__u,p=r.__c.__z)&&(n.__u|=l,h=o=[],p.nodeType==8?c=ne(p,o):o.push(p),c=o[0]||c),(p=e.__b)&&p(n);n:if(typeof L==`function`){v=s.length;try{if(E=n.props,D=(p=L.prototype)&&p.render,O=(p=L.contextType)&&i[p.__c],k=p?O?O.props.value:p.__:i,(y=r.__c)?(n.__c=y,2&y.__g&&(y.__g|=1)):(D?n.__c=y=new L(E,k):(n.__c=y=new x(E,k),y.constructor=L,y.render=F),O&&O.sub(y),y.state||(y.state={}),y.__n=i,y.__g|=8,y.__h=[],y.__k=[]),D&&(y.__s||(y.__s=y.state),L.getDerivedStateFromProps&&(y.__s==y.state&&(y.__s=g({},y.__s)),g(y.__s,L.getDerivedStateFromProps(E,y.__s)))),C=y.props,w=y.state,y.__v=n,r.__c){if(E!==C&&D&&!L.getDerivedStateFromProps&&y.componentWillReceiveProps&&y.componentWillReceiveProps(E,k),n.__v==r.__v&&!(8&y.__g)||!(4&y.__g)&&y.shouldComponentUpdate&&!1===y.shouldComponentUpdate(E,y.__s,k)){n.__v!=r.__v&&(y.props=E,y.state=y.__s,y.__g&=-9),n.__e=r.__e,n.__k=r.__k,n.__k.some(function(e){e&&(e.__=n)}),f.push.apply(y.__h,y.__k),y.__k=[],y.__h.length&&s.push(y),c=S(r);break n}y.componentWillUpdate&&y.componentWillUpdate(E,y.__s,k),D&&y.componentDidUpdate&&y.__h.push(function(){y.componentDidUpdate(C,w,T)})}else D&&!L.getDerivedStateFromProps&&y.componentWillMount&&y.componentWillMount(),D&&y.componentDidMount&&y.__h.push(y.componentDidMount);y.context=k,y.props=E,y.__P=t,y.__g&=-5,A=e.__r,te=D?25:0;do y.__g&=-9,A&&A(n),p=y.render(y.props,y.state=y.__s,y.context);while(8&y.__g&&++te<25);D&&(f.push.apply(y.__h,y.__k),y.__k=[]),y.state=y.__s,y.getChildContext&&(i=g({},i,y.getChildContext())),D&&r.__c&&y.getSnapshotBeforeUpdate&&(T=y.getSnapshotBeforeUpdate(C,w)),j=p&&p.type===b&&p.key==null?p.props.children:p,E.__P&&(p=c,a=(t=E.__P).namespaceURI,l=o=null,r.props&&r.props.__P!=t&&(r.__k.some(function(e){e&&ae(e,e)}),r.__k=null),c=r.__k?S(r,0):null),c=ee(t,m(j)?j:[j],n,r,i,a,o,s,c,l,d),E.__P&&(n.__e=null,c=p),n.__u&=-161,h&&h.some(_),y.__h.length&&s.push(y),1&y.__g&&(y.__g&=-4)}catch(t){if(s.length=v,n.__v=null,l||o){if(t&&t.then){if(n.__u|=128|l,o){for(~(P=o.indexOf(c||void 0))||(P=o.length);(I=o[P-1])&&I.nodeType==8;)P--;for(;P<o.length;P++)if(I=o[P]){if(o[P]=null,M){if(I==N)break}else{if(I.nodeType!=8)break;I.data.startsWith(`$s`)&&(N=ne(M=I))}}}if(!M){for(;c&&c.nodeType==8&&c.nextSibling;)c=c.nextSibling;M=c}(p=ne(M=n.__c.__z||(n.__c.__z=M)))?(n.__e=M,c=p):n.__e=c,c&&=c.nextSibling}else o&&o.some(_)}else n.__e=r.__e;n.__k||=r.__k||[],t&&t.then||re(n),e.__e(t,n,r)}}else c=n.__e=ie(r.__e,n,r,i,a,o,s,l,d,t);return(p=e.diffed)&&p(n),c}function ne(e,t){if(e&&e.nodeType==8&&e.data.startsWith(`$s`))for(var n=1;e=e.nextSibling;){if(e.nodeType==8){if(e.data.startsWith(`$s`))n++;else if(e.data.startsWith(`/$s`)&&!--n)return e}t&&t.push(e)}}function re(e){e&&(e.__c&&(e.__c.__g|=4),e.__k&&e.__k.some(re))}function N(t,n,r){for(var i=0;i<r.length;)P(r[i++],r[i++],r[i++]);e.__c&&e.__c(n,t),t.some(function(n){try{t=n.__h,n.__h=[],t.some(function(e){e.call(n)})}catch(t){e.__e(t,n.__v)}})}function ie(t,n,r,i,a,o,s,c,l,u){var f,g,v,y,b,x,C,w,T=r.props||d,E=n.props,D=n.type;if(D==`svg`?a=`http://www.w3.org/2000/svg`:D==`math`?a=`http://www.w3.org/1998/Math/MathML`:a||=`http://www.w3.org/1999/xhtml`,o){for(f=0;f<o.length;f++)if((b=o[f])&&(D?b.localName==D:b.nodeType==3)){t=b,o[f]=null;break}}if(!t){if(w=u.ownerDocument||document,!D)return w.createTextNode(E);t=w.createElementNS(a,D,E.is?E:u),c&&=(e.__m&&e.__m(n,o),!1),o=null}if(D){if(u=D==`template`&&t.content||t,o=D==`textarea`&&E.defaultValue!=null?null:o&&h.call(u.childNodes),!c&&o)for(T={},f=0;f<t.attributes.length;f++)T[(b=t.attributes[f]).name]=b.value;for(f in T)b=T[f],f==`dangerouslySetInnerHTML`?v=b:f==`children`||f in E||f==`value`&&`defaultValue`in E||f==`checked`&&`defaultChecked`in E||te(t,f,null,b,a);for(f in E)b=E[f],f==`children`?y=b:f==`dangerouslySetInnerHTML`?g=b:f==`value`?x=b:f==`checked`?C=b:c&&typeof b!=`function`||T[f]===b||te(t,f,b,T[f],a);g?(c||v&&(g.__html==v.__html||g.__html==t.innerHTML)||(t.innerHTML=g.__html),n.__k=[]):(v&&(t.textContent=``),(D==`foreignObject`||a==`http://www.w3.org/1998/Math/MathML`&&p.test(D))&&(a=`http://www.w3.org/1999/xhtml`),ee(u,m(y)?y:[y],n,r,i,a,o,s,o?o[0]:r.__k&&S(r,0),c,l),o&&o.some(_)),c&&D!=`textarea`||(f=`value`,D==`progress`&&x==null?t.removeAttribute(f):x==null||x===t[f]&&(D!=`progress`||x)||te(t,f,x,T[f],a),f=`checked`,C!=null&&C!=t[f]&&te(t,f,C,T[f],a))}else T===E||c&&t.data==E||(t.data=E);return t}function P(t,n,r,i){try{typeof t==`function`?n?n.__x=t(n)||1:(i&&=i.__c||i.__e)&&(n=i.__x)&&(i.__x=null,typeof n==`function`?n():t(null)):t.current=n}catch(t){e.__e(t,r)}}function ae(t,n,r){var i,a,o,s;if(e.unmount&&e.unmount(t),!(i=t.ref)||i.current&&i.current!=t.__e||P(i,null,n,t),i=t.__c){if(i.componentWillUnmount)try{i.componentWillUnmount()}catch(t){e.__e(t,n)}i.__P=i.__n=null}if(i=t.__k)for(s=0;s<i.length;s++)i[s]&&ae(i[s],n,typeof t.type!=`function`||r&&!t.props.__P);!r&&(i=t.__c)&&(i=i.__z)&&(a=ne(i,o=[]))&&(i==t.__e&&o.some(_),_(a),_(i)),r||_(t.__e),t.__e=t.__c=t.__=null}function F(e,t,n){return this.constructor(e,n)}function I(t,n){var r,i,a,o;e.__&&e.__(t,n),n.nodeType==9&&(n=n.documentElement),i=(r=t&&32&t.__u)?null:n.__k,n.__k=y(b,{children:[t]}),a=[],o=[],M(n,n.__k,i||d,d,n.namespaceURI,i?null:n.firstChild?h.call(n.childNodes):null,a,i?i.__e:n.firstChild,r,o),N(a,n.__k,o),n.__k.props.children=null}e={__e:function(e,t,n,r){for(var a,o,s;t=t.__;)if((a=t.__c)&&!(1&a.__g)){a.__g|=4;try{if((s=(o=a.constructor)&&o.getDerivedStateFromError)&&a.setState(o.getDerivedStateFromError(e)),a.componentDidCatch&&(a.componentDidCatch(e,r||{}),s=1),s&&8&a.__g)return void(a.__g|=2)}catch(t){e=t}}throw i=0,e}},t=0,x.prototype.setState=function(e,t){var n=this.__s;n&&n!=this.state||(n=this.__s=g({},this.state)),typeof e==`function`&&(e=e(g({},n),this.props)),e&&(g(n,e),this.__v&&(t&&this.__k.push(t),T(this)))},x.prototype.forceUpdate=function(e){this.__v&&(this.__g|=4,e&&this.__h.push(e),T(this))},x.prototype.render=b,n=[],i=0,a=function(e,t){return e.__v.__b-t.__v.__b},o=Symbol(),s=/(PointerCapture)$|Capture$/i,c=0,l={};var L,R,oe,z,B=Object.is,V=0,se=[],ce=[],H=e,le=H.__b,ue=H.__r,de=H.diffed,fe=H.__c,U=H.unmount,pe=H.__;function me(e,t){H.__h&&H.__h(R,e,V||t),V=0;var n=R.__H||(R.__H={__:[],__h:[]});return e>=n.__.length&&n.__.push({}),n.__[e]}function W(e){return V=1,he(Te,e)}function he(e,t,n){var r=me(L++,2);if(r.t=e,!r.__c&&(r.__=[n?n(t):Te(void 0,t),function(e){var t=(r.__N||r.__)[0],n=r.t(t,e);B(t,n)||(r.__N=[n,r.__[1]],r.__c.setState({}))}],r.__c=R,!R.__f)){R.__f=!0;var i=R.shouldComponentUpdate;R.shouldComponentUpdate=function(e,t,n){var r=this.__H;if(!r)return!0;var a=!1,o=this.props!=e;if(r.__.some(function(e){e.__N&&(a=!0,B(e.__[0],e.__N[0])||(o=!0))}),i){var s=i.call(this,e,t,n);return a?s||o:s}return!a||o}}return r.__}function G(e,t){var n=me(L++,3);!H.__s&&we(n.__H,t)&&(n.__P=!0,n.__=e,n.u=t,R.__H.__h.push(n))}function ge(e){return V=5,_e(function(){return{current:e}},[])}function _e(e,t){var n=me(L++,7);return we(n.__H,t)&&(n.__=e(),n.__H=t),n.__}function ve(){var e;do{for(;e=ce.shift();)try{Se(e)}catch(t){H.__e(t,{__:(e=e.__P)&&e.__v})}for(;e=se.shift();){var t=e.__H;if(e.__P&&t)try{t.__h.some(Se),t.__h.some(Ce),t.__h=[]}catch(n){t.__h=[],H.__e(n,e.__v)}}}while(ce.length)}H.__b=function(e){R=null,le&&le(e)},H.__=function(e,t){e&&t.__k&&t.__k.__m&&(e.__m=t.__k.__m),pe&&pe(e,t)},H.__r=function(e){ue&&ue(e),L=0;var t=(R=e.__c).__H;t&&(oe==R?R.__h=[]:(t.__h.some(Se),t.__h.some(Ce),L=0),t.__h=[],t.__.some(function(e){e.__N&&(e.__=e.__N),e.u=e.__N=void 0})),oe=R},H.diffed=function(e){de&&de(e);var t=e.__c;t&&t.__H&&(t.__H.__h.length&&xe(se.push(t)),t.__H.__.some(function(e){e.u&&(e.__H=e.u)})),oe=R=null},H.__c=function(e,t){t.some(function(e){try{e.__h.some(Se),e.__h=e.__h.filter(function(e){return!e.__||Ce(e)})}catch(t){e.__h=[function(){throw t}]}}),fe&&fe(e,t)},H.unmount=function(e){U&&U(e);var t,n,r=e.__c;r&&r.__H&&(r.__H.__.some(function(r){try{if(r.__P&&r.__c){if(n===void 0){for(n=e.__;n&&(!n.__c||!n.__c.__P);)n=n.__;n&&=n.__c}r.__P=n,xe(ce.push(r))}else Se(r)}catch(e){t=e}}),r.__H=void 0,t&&H.__e(t,r.__v))};var ye=typeof requestAnimationFrame==`function`;function be(e){var t,n=function(){clearTimeout(r),ye&&cancelAnimationFrame(t),setTimeout(e)},r=setTimeout(n,35);ye&&(t=requestAnimationFrame(n))}function xe(e){e!=1&&z==H.requestAnimationFrame||((z=H.requestAnimationFrame)||be)(ve)}function Se(e){var t=R,n=e.__c;typeof n==`function`&&(e.__c=void 0,n()),R=t}function Ce(e){var t=R;e.__c=e.__(),R=t}function we(e,t){return!e||e.length!=t.length||t.some(function(t,n){return!B(t,e[n])})}function Te(e,t){return typeof t==`function`?t(e):t}var Ee=function(e,t,n,r){var i;t[0]=0;for(var a=1;a<t.length;a++){var o=t[a++],s=t[a]?(t[0]|=o?1:2,n[t[a++]]):t[++a];o===3?r[0]=s:o===4?r[1]=Object.assign(r[1]||{},s):o===5?(r[1]=r[1]||{})[t[++a]]=s:o===6?r[1][t[++a]]+=s+``:o?(i=e.apply(s,Ee(e,s,n,[``,null])),r.push(i),s[0]?t[0]|=2:(t[a-2]=0,t[a]=i)):r.push(s)}return r},De=new Map;function Oe(e){var t=De.get(this);return t||(t=new Map,De.set(this,t)),(t=Ee(this,t.get(e)||(t.set(e,t=function(e){for(var t,n,r=1,i=``,a=``,o=[0],s=function(e){r===1&&(e||(i=i.replace(/^\s*\n\s*|\s*\n\s*$/g,``)))?o.push(0,e,i):r===3&&(e||i)?(o.push(3,e,i),r=2):r===2&&i===`...`&&e?o.push(4,e,0):r===2&&i&&!e?o.push(5,0,!0,i):r>=5&&((i||!e&&r===5)&&(o.push(r,0,i,n),r=6),e&&(o.push(r,e,0,n),r=6)),i=``},c=0;c<e.length;c++){c&&(r===1&&s(),s(c));for(var l=0;l<e[c].length;l++)t=e[c][l],r===1?t===`<`?(s(),o=[o],r=3):i+=t:r===4?i===`--`&&t===`>`?(r=1,i=``):i=t+i[0]:a?t===a?a=``:i+=t:t===`"`||t===`'`?a=t:t===`>`?(s(),r=1):r&&(t===`=`?(r=5,n=i,i=``):t===`/`&&(r<5||e[c][l+1]===`>`)?(s(),r===3&&(o=o[0]),r=o,(o=o[0]).push(2,0,r),r=0):t===` `||t===`	`||t===`
`||t===`\r`?(s(),r=2):i+=t),r===3&&i===`!--`&&(r=4,o=o[0])}return s(),o}(e)),t),arguments,[])).length>1?t:t[0]}var K=Oe.bind(v),ke=`baton.console.token`,Ae={get:()=>sessionStorage.getItem(ke)||``,set:e=>sessionStorage.setItem(ke,e),clear:()=>sessionStorage.removeItem(ke)},je=new URL(`../`,new URL(`.`,location.href.split(`#`)[0]));function Me(e,t){let n=new URL(e,je);for(let[e,r]of Object.entries(t||{}))r!=null&&r!==``&&n.searchParams.set(e,String(r));return n}var Ne=class extends Error{constructor(e,t,n){super(n),this.status=e,this.code=t}},Pe=()=>{};function Fe(e){Pe=e}async function q(e,t,{query:n,body:r,signal:i,etag:a,meta:o,key:s}={}){let c={Authorization:`Bearer ${Ae.get()}`,Accept:`application/json`};a&&(c[`If-None-Match`]=a),r!==void 0&&(c[`Content-Type`]=`application/json`,c[`Idempotency-Key`]=s||crypto.randomUUID());let l;try{l=await fetch(Me(t,n),{method:e,headers:c,body:r===void 0?void 0:JSON.stringify(r),signal:i,credentials:`omit`,cache:`no-store`})}catch(e){throw e.name===`AbortError`?e:new Ne(0,`network`,`The API did not answer: ${e.message}`)}if(l.status===304)return{notModified:!0,etag:a};let u=await l.text(),d=null;try{d=u?JSON.parse(u):null}catch{}if(!l.ok){let n=d&&d.error||{};throw l.status===401&&Pe(),new Ne(l.status,n.code||`http_${l.status}`,n.message||`${e} ${t}: HTTP ${l.status}`)}return o?{data:d,etag:l.headers.get(`ETag`)||``}:d}var J={listRuns:(e,t)=>q(`GET`,`v1/runs`,{query:e,signal:t}),listRunsSince:(e,t,n)=>q(`GET`,`v1/runs`,{query:e,signal:n,etag:t,meta:!0}),getRun:(e,t)=>q(`GET`,`v1/runs/${encodeURIComponent(e)}`,{signal:t}),messages:(e,t,n)=>q(`GET`,`v1/runs/${encodeURIComponent(e)}/messages`,{query:{after:t,limit:1e3},signal:n}),approve:(e,t,n,r)=>q(`POST`,`v1/runs/${encodeURIComponent(e)}/approvals/${encodeURIComponent(t)}`,{body:r?{decision:n,reason:r}:{decision:n}}),submitResult:(e,t)=>q(`POST`,`v1/runs/${encodeURIComponent(e)}/tool-results`,{body:t}),cancel:(e,t)=>q(`POST`,`v1/runs/${encodeURIComponent(e)}/cancel`,{body:t?{reason:t}:{}}),steer:(e,t)=>q(`POST`,`v1/runs/${encodeURIComponent(e)}/messages`,{body:{content:t}}),interrupt:(e,t)=>q(`POST`,`v1/runs/${encodeURIComponent(e)}/interrupt`,{body:t?{reason:t}:{}}),fork:(e,t,n)=>q(`POST`,`v1/runs/${encodeURIComponent(e)}/fork`,{body:t,key:n}),openAPI:()=>q(`GET`,`v1/openapi.json`),versions:e=>q(`GET`,`v1/agent-versions`,{signal:e}),listEvals:(e,t)=>q(`GET`,`v1/evals`,{query:e,signal:t}),getEval:(e,t)=>q(`GET`,`v1/evals/${encodeURIComponent(e)}`,{signal:t}),startEval:(e,t)=>q(`POST`,`v1/evals`,{body:e,key:t}),cancelEval:e=>q(`POST`,`v1/evals/${encodeURIComponent(e)}/cancel`,{body:{}}),listMemories:(e,t)=>q(`GET`,`v1/memories`,{query:e,signal:t}),deleteMemory:(e,t)=>q(`DELETE`,`v1/memories/${encodeURIComponent(e)}`,{query:{subject:t}}),eraseMemories:e=>q(`DELETE`,`v1/memories`,{query:{subject:e}}),listSchedules:(e,t)=>q(`GET`,`v1/schedules`,{query:e,signal:t}),getSchedule:(e,t)=>q(`GET`,`v1/schedules/${encodeURIComponent(e)}`,{signal:t}),pauseSchedule:(e,t)=>q(`PATCH`,`v1/schedules/${encodeURIComponent(e)}`,{body:{paused:t}}),deleteSchedule:e=>q(`DELETE`,`v1/schedules/${encodeURIComponent(e)}`),triggers:(e,t,n)=>q(`GET`,`v1/schedules/${encodeURIComponent(e)}/triggers`,{query:t,signal:n})};async function Ie(e,t,n,r){let i={Authorization:`Bearer ${Ae.get()}`,Accept:`text/event-stream`};t>0&&(i[`Last-Event-ID`]=String(t));let a=await fetch(Me(`v1/runs/${encodeURIComponent(e)}/stream`),{headers:i,signal:r,credentials:`omit`,cache:`no-store`});if(!a.ok||!a.body)throw a.status===401&&Pe(),new Ne(a.status,`http_${a.status}`,`stream: HTTP ${a.status}`);let o=a.body.pipeThrough(new TextDecoderStream).getReader(),s=``,c={event:`message`,data:[],id:``};for(;;){let{value:e,done:t}=await o.read();if(t)return;s+=e;let r;for(;(r=s.search(/\r\n|\r|\n/))>=0;){let e=s.slice(0,r);if(s=s.slice(r+(s[r]===`\r`&&s[r+1]===`
`?2:1)),e===``){if(c.data.length){let e=c.data.join(`
`);try{e=JSON.parse(e)}catch{}n({event:c.event,data:e,id:c.id})}else c.id&&n({event:`id`,data:null,id:c.id});c={event:`message`,data:[],id:``};continue}if(e.startsWith(`:`))continue;let t=e.indexOf(`:`),i=t<0?e:e.slice(0,t),a=t<0?``:e.slice(t+1);a.startsWith(` `)&&(a=a.slice(1)),i===`event`?c.event=a:i===`data`?c.data.push(a):i===`id`&&(c.id=a)}}}function Le({notice:e,onSignedIn:t}){let[n,r]=W(``),[i,a]=W(``),[o,s]=W(!1);return K`
    <main id="main" class="signin">
      <h1>Baton console</h1>
      <p>Sign in with an API token (or a bearer JWT where your deployment accepts them). It is kept in this tab only.</p>
      ${e&&K`<p class="notice" role="status">${e}</p>`}
      <form onSubmit=${async e=>{e.preventDefault();let r=n.trim();if(!r)a(`Enter an API token.`);else{s(!0),a(``),Ae.set(r);try{await J.listRuns({limit:1}),t()}catch(e){Ae.clear(),a(e instanceof Ne&&e.status===401?`The API does not accept this token.`:`Sign-in failed: ${e.message}`)}finally{s(!1)}}}} noValidate>
        <label for="token">API token</label>
        <input id="token" name="token" type="password" autocomplete="off" spellcheck="false" value=${n}
          onInput=${e=>r(e.currentTarget.value)} aria-describedby=${i?`token-error`:void 0} aria-invalid=${i?`true`:void 0} />
        ${i&&K`<p id="token-error" class="error" role="alert">${i}</p>`}
        <button type="submit" disabled=${o}>Sign in</button>
      </form>
    </main>`}var Re=[`queued`,`running`,`runtime_tool_pending`,`approval_required`,`completed`,`max_turns_reached`,`budget_exceeded`,`failed`,`cancelled`,`interrupted`,`stalled`,`transcript_lock_contention`],ze=new Set([`completed`,`max_turns_reached`,`budget_exceeded`,`failed`,`cancelled`,`interrupted`,`stalled`,`transcript_lock_contention`]),Be=e=>ze.has(e),Ve=e=>e===`approval_required`||e===`runtime_tool_pending`;function Y(e){if(!e)return``;let t=new Date(e);return Number.isNaN(t.getTime())?e:t.toLocaleString()}function He(e){let t=new Date(e);return!e||Number.isNaN(t.getTime())?{local:e||``,utc:``}:{local:t.toLocaleString(void 0,{weekday:`short`,year:`numeric`,month:`short`,day:`numeric`,hour:`2-digit`,minute:`2-digit`,timeZoneName:`short`}),utc:`${t.toISOString().slice(0,16).replace(`T`,` `)} UTC`}}function Ue(e){if(e==null||Number.isNaN(e))return``;if(e<1e3)return`${Math.round(e)} ms`;if(e<6e4)return`${(e/1e3).toFixed(e<1e4?2:1)} s`;let t=Math.round(e/1e3);return t<3600?`${Math.floor(t/60)} min ${t%60} s`:`${Math.floor(t/3600)} h ${Math.floor(t%3600/60)} min`}function X(e){return typeof e==`number`?`$${e.toFixed(4)}`:``}function We(e){return typeof e==`number`?e.toLocaleString():``}function Ge(e,t=Date.now()){let n=Date.parse(e.created_at),r=e.ended_at?Date.parse(e.ended_at):t;return Number.isNaN(n)||Number.isNaN(r)?``:Ue(Math.max(0,r-n))}function Ke(e){if(typeof e==`string`)try{return JSON.stringify(JSON.parse(e),null,2)}catch{return e}return JSON.stringify(e,null,2)}var qe=25,Je=2e3,Ye=[[``,`any time`],[`3600000`,`last hour`],[`86400000`,`last 24 hours`],[`604800000`,`last 7 days`]];function Xe(e,t){let[n,r]=W(null),[i,a]=W(``),[o,s]=W(Date.now());return G(()=>{let t=new AbortController,n,i=``;r(null);let o=async()=>{try{let n=await J.listRunsSince(e(),i,t.signal);n.notModified||(i=n.etag,r(n.data)),a(``)}catch(e){if(e.name===`AbortError`)return;a(e.message)}s(Date.now()),n=setTimeout(o,Je)};return o(),()=>{t.abort(),clearTimeout(n)}},[t]),{page:n,error:i,now:o}}function Ze(){let[e,t]=W(``),[n,r]=W(``),[i,a]=W(``),[o,s]=W([]),[c,l]=W([``]),u=c[c.length-1],{page:d,error:f,now:p}=Xe(()=>({status:e,agent:n,top_level:`true`,limit:qe,cursor:u,since:i?new Date(Date.now()-Number(i)).toISOString():``}),`${e}|${n}|${i}|${u}`),m=d&&d.runs||[];G(()=>{let e=new Set(o);for(let t of m)e.add(t.agent);e.size!==o.length&&s([...e].sort())},[d]);let h=e=>t=>{e(t.currentTarget.value),l([``])},g=m.filter(e=>Ve(e.status)).length,_=e||n||i;return K`
    <h1>Runs</h1>
    <div class="toolbar" role="group" aria-label="Filters">
      <span class="field">
        <label for="status-filter">Status</label>
        <select id="status-filter" value=${e} onChange=${h(t)}>
          <option value="">all</option>
          ${Re.map(e=>K`<option value=${e}>${e}</option>`)}
        </select>
      </span>
      <span class="field">
        <label for="agent-filter">Agent</label>
        <select id="agent-filter" value=${n} onChange=${h(r)}>
          <option value="">all</option>
          ${(n&&!o.includes(n)?[n,...o]:o).map(e=>K`<option value=${e}>${e}</option>`)}
        </select>
      </span>
      <span class="field">
        <label for="time-filter">Started</label>
        <select id="time-filter" value=${i} onChange=${h(a)}>
          ${Ye.map(([e,t])=>K`<option value=${e}>${t}</option>`)}
        </select>
      </span>
      <span class="count" aria-live="polite">${d?`${m.length} shown${g?`, ${g} waiting on you`:``}`:`Loading…`}</span>
    </div>
    ${f&&K`<p class="error" role="alert">${f}</p>`}
    <table class="runs">
      <caption class="visually-hidden">Runs, newest first; child runs under their parent</caption>
      <thead><tr>
        <th scope="col">Run</th><th scope="col">Agent</th><th scope="col">Status</th><th scope="col">Started</th>
        <th scope="col" class="num">Duration</th><th scope="col" class="num">Turns</th><th scope="col" class="num">Tokens</th><th scope="col" class="num">Cost</th>
      </tr></thead>
      <tbody>
        ${m.map(e=>K`<${Qe} key=${e.run_id} run=${e} now=${p} />`)}
        ${d&&m.length===0&&K`<tr><td colspan="8">No runs${_?` match these filters`:``}.</td></tr>`}
      </tbody>
    </table>
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled=${c.length<2} onClick=${()=>l(c.slice(0,-1))}>Newer runs</button>
      <button type="button" disabled=${!d||!d.next_cursor} onClick=${()=>l([...c,d.next_cursor])}>Older runs</button>
    </nav>`}function Qe({run:e,now:t}){let[n,r]=W(!1);return K`
    <${et} run=${e} now=${t} open=${n} onToggle=${e.children?()=>r(!n):null} />
    ${n&&K`<${$e} parent=${e.run_id} />`}`}function $e({parent:e}){let{page:t,error:n,now:r}=Xe(()=>({parent:e,limit:100}),e);return n?K`<tr class="child"><td colspan="8"><p class="error" role="alert">${n}</p></td></tr>`:t?[...t.runs].reverse().map(e=>K`<${Qe} key=${e.run_id} run=${e} now=${r} />`):K`<tr class="child"><td colspan="8">Loading child runs…</td></tr>`}function et({run:e,now:t,open:n,onToggle:r}){let i=!!e.parent,a=Ve(e.status),o=e.title||e.run_id;return K`
    <tr class=${[a?`waiting`:``,i?`child`:``].join(` `).trim()||void 0} data-run-id=${e.run_id}>
      <td class="run" data-label="Run">
        <div class="title">
          ${i&&K`<span class="marker child-marker" title=${`child run of ${e.parent.run_id}, answering call ${e.parent.tool_call_id}`}>↳ child run</span> `}
          <a href=${`#/runs/${encodeURIComponent(e.run_id)}`} title=${e.title||void 0}>${o}</a>
        </div>
        <div class="dim mono id">${e.run_id}</div>
        ${e.schedule_id&&K`<div class="scheduled dim">scheduled by <a class="mono" href=${`#/schedules/${encodeURIComponent(e.schedule_id)}`}>${e.schedule_id}</a></div>`}
        ${r&&K`
          <button type="button" class="link" aria-expanded=${n?`true`:`false`} onClick=${r}>
            ${n?`▾`:`▸`} ${e.children} child run${e.children===1?``:`s`}
          </button>`}
      </td>
      <td data-label="Agent">${e.agent}${e.agent_version&&K`<div class="dim mono version" title="agent version"><span class="visually-hidden">version </span>${e.agent_version}</div>`}</td>
      <td data-label="Status">
        <span class=${`badge s-${e.status}`}>${e.status}</span>${a&&K` <span class="marker">waiting on you</span>`}
        ${e.reason&&K`<div class="reason">${e.reason}</div>`}
      </td>
      <td data-label="Started"><time datetime=${e.created_at}>${Y(e.created_at)}</time></td>
      <td data-label="Duration" class="num">${Ge(e,t)}${!Be(e.status)&&K` <span class="dim">so far</span>`}</td>
      <td data-label="Turns" class="num">${e.turns}</td>
      <td data-label="Tokens" class="num">${We(e.total_tokens)}</td>
      <td data-label="Cost" class="num">${X(e.cost_usd)}</td>
    </tr>`}function tt(e,t){let n=typeof e;if(n!==typeof t)return!1;let r=Array.isArray(e);if(r!==Array.isArray(t))return!1;if(r){let n=e.length;if(n!==t.length)return!1;for(let r=0;r<n;r++)if(!tt(e[r],t[r]))return!1;return!0}if(n===`object`){if(!e||!t)return e===t;let n=Object.keys(e),r=Object.keys(t);if(n.length!==r.length)return!1;for(let r of n)if(!Object.prototype.hasOwnProperty.call(t,r)||!tt(e[r],t[r]))return!1;return!0}return e===t}function Z(e){return encodeURI(nt(e)).replace(/#/g,`%23`)}function nt(e){return e.replace(/~/g,`~0`).replace(/\//g,`~1`)}var rt=/^[A-Za-z0-9._~!$&'()*+,;=:@/?-]$/,it=/^%[0-9A-Fa-f]{2}$/,at=/^[A-Za-z0-9._~-]$/;function ot(e){let t=``;for(let n=0;n<e.length;){let r=e[n],i=e.slice(n,n+3);if(r===`%`&&it.test(i)){let e=String.fromCharCode(parseInt(i.slice(1),16));t+=at.test(e)?e:i.toUpperCase(),n+=3;continue}let a=String.fromCodePoint(e.codePointAt(n));t+=rt.test(a)?a:encodeURIComponent(a),n+=a.length}return t}function st(e,t){let n=new URL(e,t.href);return n.hash=n.hash?ot(n.hash.slice(1)):``,n}var ct={prefixItems:!0,items:!0,allOf:!0,anyOf:!0,oneOf:!0},lt={$defs:!0,definitions:!0,properties:!0,patternProperties:!0,dependentSchemas:!0},ut={id:!0,$id:!0,$ref:!0,$schema:!0,$anchor:!0,$vocabulary:!0,$comment:!0,default:!0,enum:!0,const:!0,required:!0,dependentRequired:!0,type:!0,maximum:!0,minimum:!0,exclusiveMaximum:!0,exclusiveMinimum:!0,multipleOf:!0,maxLength:!0,minLength:!0,pattern:!0,format:!0,maxItems:!0,minItems:!0,uniqueItems:!0,maxProperties:!0,minProperties:!0},dt=typeof self<`u`&&self.location&&self.location.origin!==`null`?new URL(self.location.origin+self.location.pathname+location.search):new URL(`https://github.com/cfworker`);function ft(e,t=Object.create(null),n=dt,r=``){if(e&&typeof e==`object`&&!Array.isArray(e)){let i=e.$id||e.id;if(i){let a=st(i,n);a.hash.length>1?t[a.href]=e:(a.hash=``,r===``?n=a:ft(e,t,n))}}else if(e!==!0&&e!==!1)return t;let i=n.href+(r?`#`+r:``);if(t[i]!==void 0&&t[i]!==e)throw Error(`Duplicate schema URI "${i}".`);if(t[i]=e,e===!0||e===!1)return t;if(e.__absolute_uri__===void 0&&Object.defineProperty(e,"__absolute_uri__",{enumerable:!1,value:i}),e.$ref&&e.__absolute_ref__===void 0){let t=st(e.$ref,n);Object.defineProperty(e,"__absolute_ref__",{enumerable:!1,value:t.href})}if(e.$recursiveRef&&e.__absolute_recursive_ref__===void 0){let t=st(e.$recursiveRef,n);Object.defineProperty(e,"__absolute_recursive_ref__",{enumerable:!1,value:t.href})}if(e.$anchor){let r=st(`#`+e.$anchor,n);t[r.href]=e}for(let i in e){if(ut[i])continue;let a=`${r}/${Z(i)}`,o=e[i];if(Array.isArray(o)){if(ct[i]){let e=o.length;for(let r=0;r<e;r++)ft(o[r],t,n,`${a}/${r}`)}}else if(lt[i])for(let e in o)ft(o[e],t,n,`${a}/${Z(e)}`);else ft(o,t,n,a)}return t}var pt=/^(\d\d\d\d)-(\d\d)-(\d\d)$/,mt=[0,31,28,31,30,31,30,31,31,30,31,30,31],ht=/^(\d\d):(\d\d):(\d\d)(\.\d+)?(z|([+-])(\d\d):(\d\d))?$/i,gt=/^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[-0-9a-z]{0,61}[0-9a-z])?)*$/i,_t=/^(?:[a-z][a-z0-9+\-.]*:)?(?:\/?\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\[(?:(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-f]{1,4}:){5}|(?:[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){4}|(?:(?:[0-9a-f]{1,4}:){0,1}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){3}|(?:(?:[0-9a-f]{1,4}:){0,2}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){2}|(?:(?:[0-9a-f]{1,4}:){0,3}[0-9a-f]{1,4})?::[0-9a-f]{1,4}:|(?:(?:[0-9a-f]{1,4}:){0,4}[0-9a-f]{1,4})?::)(?:[0-9a-f]{1,4}:[0-9a-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?))|(?:(?:[0-9a-f]{1,4}:){0,5}[0-9a-f]{1,4})?::[0-9a-f]{1,4}|(?:(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})?::)|[Vv][0-9a-f]+\.[a-z0-9\-._~!$&'()*+,;=:]+)\]|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?)|(?:[a-z0-9\-._~!$&'"()*+,;=]|%[0-9a-f]{2})*)(?::\d*)?(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*|\/(?:(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*)?(?:\?(?:[a-z0-9\-._~!$&'"()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[a-z0-9\-._~!$&'"()*+,;=:@/?]|%[0-9a-f]{2})*)?$/i,vt=/^(?:(?:[^\x00-\x20\x7f"<>%\\^`{|}]|%[0-9a-f]{2})|\{[+#./;?&=,!@|]?(?:[a-z0-9_]|%[0-9a-f]{2})+(?:\.(?:[a-z0-9_]|%[0-9a-f]{2})+)*(?::[1-9][0-9]{0,3}|\*)?(?:,(?:[a-z0-9_]|%[0-9a-f]{2})+(?:\.(?:[a-z0-9_]|%[0-9a-f]{2})+)*(?::[1-9][0-9]{0,3}|\*)?)*\})*$/i,yt=/^(?:(?:https?|ftp):\/\/)(?:\S+(?::\S*)?@)?(?:(?!10(?:\.\d{1,3}){3})(?!127(?:\.\d{1,3}){3})(?!169\.254(?:\.\d{1,3}){2})(?!192\.168(?:\.\d{1,3}){2})(?!172\.(?:1[6-9]|2\d|3[0-1])(?:\.\d{1,3}){2})(?:[1-9]\d?|1\d\d|2[01]\d|22[0-3])(?:\.(?:1?\d{1,2}|2[0-4]\d|25[0-5])){2}(?:\.(?:[1-9]\d?|1\d\d|2[0-4]\d|25[0-4]))|(?:(?:[a-z\u{00a1}-\u{ffff}0-9]+-?)*[a-z\u{00a1}-\u{ffff}0-9]+)(?:\.(?:[a-z\u{00a1}-\u{ffff}0-9]+-?)*[a-z\u{00a1}-\u{ffff}0-9]+)*(?:\.(?:[a-z\u{00a1}-\u{ffff}]{2,})))(?::\d{2,5})?(?:\/[^\s]*)?$/iu,bt=/^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i,xt=/^(?:\/(?:[^~/]|~0|~1)*)*$/,St=/^#(?:\/(?:[a-z0-9_\-.!$&'()*+,;:=@]|%[0-9a-f]{2}|~0|~1)*)*$/i,Ct=/^(?:0|[1-9][0-9]*)(?:#|(?:\/(?:[^~/]|~0|~1)*)*)$/,wt=/^("(?:[\x20-\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*"|[a-z0-9.!#$%&'*+/=?^_`{|}~-]+)@(.+)$/i,Tt=e=>{let t=e.match(wt);if(!t)return!1;let n=t[1],r=t[2];if(!n||!r||n.length>64||r.length>253||n[0]!==`"`&&(n[0]===`.`||n.endsWith(`.`)||n.includes(`..`)))return!1;if(r.startsWith(`[`)&&r.endsWith(`]`)){let e=r.slice(1,-1);return/^ipv6:/i.test(e)?Dt.test(e.slice(5)):Et.test(e)}return gt.test(r)},Et=/^(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?)$/,Dt=/^((([0-9a-f]{1,4}:){7}([0-9a-f]{1,4}|:))|(([0-9a-f]{1,4}:){6}(:[0-9a-f]{1,4}|((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})|:))|(([0-9a-f]{1,4}:){5}(((:[0-9a-f]{1,4}){1,2})|:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})|:))|(([0-9a-f]{1,4}:){4}(((:[0-9a-f]{1,4}){1,3})|((:[0-9a-f]{1,4})?:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){3}(((:[0-9a-f]{1,4}){1,4})|((:[0-9a-f]{1,4}){0,2}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){2}(((:[0-9a-f]{1,4}){1,5})|((:[0-9a-f]{1,4}){0,3}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){1}(((:[0-9a-f]{1,4}){1,6})|((:[0-9a-f]{1,4}){0,4}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(:(((:[0-9a-f]{1,4}){1,7})|((:[0-9a-f]{1,4}){0,5}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:)))$/i,Ot=e=>/^P(?:\d+W|(?:(?:\d+Y(?:\d+M(?:\d+D)?)?|\d+M(?:\d+D)?|\d+D)(?:T(?:\d+H(?:\d+M(?:\d+S)?)?|\d+M(?:\d+S)?|\d+S))?|T(?:\d+H(?:\d+M(?:\d+S)?)?|\d+M(?:\d+S)?|\d+S)))$/.test(e);function Q(e){return e.test.bind(e)}var kt={date:jt,time:Mt.bind(void 0,!0),"date-time":Pt,duration:Ot,uri:Lt,"uri-reference":Q(_t),"uri-template":Q(vt),url:Q(yt),email:Tt,hostname:Q(gt),ipv4:Q(Et),ipv6:Q(Dt),regex:zt,uuid:Q(bt),"json-pointer":Q(xt),"json-pointer-uri-fragment":Q(St),"relative-json-pointer":Q(Ct)};function At(e){return e%4==0&&(e%100!=0||e%400==0)}function jt(e){let t=e.match(pt);if(!t)return!1;let n=t[1],r=t[2],i=t[3];if(!n||!r||!i)return!1;let a=+n,o=+r,s=+i,c=o==2&&At(a)?29:mt[o];return o>=1&&o<=12&&s>=1&&c!==void 0&&s<=c}function Mt(e,t){let n=t.match(ht);if(!n)return!1;let r=n[1],i=n[2],a=n[3];if(!r||!i||!a)return!1;let o=+r,s=+i,c=+a,l=n[5],u=n[6],d=+(n[7]??0),f=+(n[8]??0);if(o>23||s>59||c>60||d>23||f>59||e&&l===void 0)return!1;if(c<60)return!0;let p=u===`+`?1:u===`-`?-1:0;return(o*60+s-p*(d*60+f)+1440)%1440==1439}var Nt=/t|\s/i;function Pt(e){let[t,n,r]=e.split(Nt);return t!==void 0&&n!==void 0&&r===void 0&&jt(t)&&Mt(!0,n)}var Ft=/\/|:/,It=/^(?:[a-z][a-z0-9+\-.]*:)(?:\/?\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\[(?:(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-f]{1,4}:){5}|(?:[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){4}|(?:(?:[0-9a-f]{1,4}:){0,1}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){3}|(?:(?:[0-9a-f]{1,4}:){0,2}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){2}|(?:(?:[0-9a-f]{1,4}:){0,3}[0-9a-f]{1,4})?::[0-9a-f]{1,4}:|(?:(?:[0-9a-f]{1,4}:){0,4}[0-9a-f]{1,4})?::)(?:[0-9a-f]{1,4}:[0-9a-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?))|(?:(?:[0-9a-f]{1,4}:){0,5}[0-9a-f]{1,4})?::[0-9a-f]{1,4}|(?:(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})?::)|[Vv][0-9a-f]+\.[a-z0-9\-._~!$&'()*+,;=:]+)\]|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?)|(?:[a-z0-9\-._~!$&'()*+,;=]|%[0-9a-f]{2})*)(?::\d*)?(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*|\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)(?:\?(?:[a-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[a-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?$/i;function Lt(e){return Ft.test(e)&&It.test(e)}var Rt=/[^\\]\\Z/;function zt(e){if(Rt.test(e))return!1;try{return new RegExp(e,`u`),!0}catch{return!1}}function Bt(e){let t=0,n=e.length,r=0,i;for(;r<n;)t++,i=e.charCodeAt(r++),i>=55296&&i<=56319&&r<n&&(i=e.charCodeAt(r),(i&64512)==56320&&r++);return t}function Vt(e,t){return Object.prototype.hasOwnProperty.call(e,t)}function Ht(e){let t=Math.abs(e).toString().split(`e`),n=t[0],r=t[1]??`0`,i=n.indexOf(`.`),a=i===-1?0:n.length-i-1;return[BigInt(n.replace(`.`,``)),Number(r)-a]}function Ut(e,t){if(!Number.isFinite(e)||!Number.isFinite(t)||t<=0)return!1;let[n,r]=Ht(e),[i,a]=Ht(t),o=r-a;return o>=0?n*10n**BigInt(o)%i==0n:n%(i*10n**BigInt(-o))==0n}function $(e,t,n=`2019-09`,r=ft(t),i=!0,a=null,o=`#`,s=`#`,c=Object.create(null)){if(t===!0)return{valid:!0,errors:[]};if(t===!1)return{valid:!1,errors:[{instanceLocation:o,keyword:`false`,keywordLocation:o,error:`False boolean schema.`}]};let l=typeof e,u;switch(l){case`boolean`:case`number`:case`string`:u=l;break;case`object`:u=e===null?`null`:Array.isArray(e)?`array`:`object`;break;default:throw Error(`Instances of "${l}" type are not supported.`)}let{$ref:d,$recursiveRef:f,$recursiveAnchor:p,type:m,const:h,enum:g,required:_,not:v,anyOf:y,allOf:b,oneOf:x,if:S,then:C,else:w,format:T,properties:E,patternProperties:ee,additionalProperties:D,unevaluatedProperties:O,minProperties:k,maxProperties:A,propertyNames:te,dependentRequired:j,dependentSchemas:M,dependencies:ne,prefixItems:re,items:N,additionalItems:ie,unevaluatedItems:P,contains:ae,minContains:F,maxContains:I,minItems:L,maxItems:R,uniqueItems:oe,minimum:z,maximum:B,exclusiveMinimum:V,exclusiveMaximum:se,multipleOf:ce,minLength:H,maxLength:le,pattern:ue,__absolute_ref__:de,__absolute_recursive_ref__:fe}=t,U=[];if(p===!0&&a===null&&(a=t),f===`#`){let l=a===null?r[fe]:a,u=`${s}/$recursiveRef`,d=$(e,a===null?t:a,n,r,i,l,o,u,c);d.valid||U.push({instanceLocation:o,keyword:`$recursiveRef`,keywordLocation:u,error:`A subschema had errors.`},...d.errors)}if(d!==void 0){let t=r[de||d];if(t===void 0){let e=`Unresolved $ref "${d}".`;throw de&&de!==d&&(e+=`  Absolute URI "${de}".`),e+=`\nKnown schemas:\n- ${Object.keys(r).join(`
- `)}`,Error(e)}let l=`${s}/$ref`,u=$(e,t,n,r,i,a,o,l,c);if(u.valid||U.push({instanceLocation:o,keyword:`$ref`,keywordLocation:l,error:`A subschema had errors.`},...u.errors),n===`4`||n===`7`)return{valid:U.length===0,errors:U}}if(Array.isArray(m)){let t=m.length,n=!1;for(let r=0;r<t;r++)if(u===m[r]||m[r]===`integer`&&u===`number`&&e%1==0&&e===e){n=!0;break}n||U.push({instanceLocation:o,keyword:`type`,keywordLocation:`${s}/type`,error:`Instance type "${u}" is invalid. Expected "${m.join(`", "`)}".`})}else m===`integer`?(u!==`number`||e%1||e!==e)&&U.push({instanceLocation:o,keyword:`type`,keywordLocation:`${s}/type`,error:`Instance type "${u}" is invalid. Expected "${m}".`}):m!==void 0&&u!==m&&U.push({instanceLocation:o,keyword:`type`,keywordLocation:`${s}/type`,error:`Instance type "${u}" is invalid. Expected "${m}".`});if(h!==void 0&&(u===`object`||u===`array`?tt(e,h)||U.push({instanceLocation:o,keyword:`const`,keywordLocation:`${s}/const`,error:`Instance does not match ${JSON.stringify(h)}.`}):e!==h&&U.push({instanceLocation:o,keyword:`const`,keywordLocation:`${s}/const`,error:`Instance does not match ${JSON.stringify(h)}.`})),g!==void 0&&(u===`object`||u===`array`?g.some(t=>tt(e,t))||U.push({instanceLocation:o,keyword:`enum`,keywordLocation:`${s}/enum`,error:`Instance does not match any of ${JSON.stringify(g)}.`}):g.some(t=>e===t)||U.push({instanceLocation:o,keyword:`enum`,keywordLocation:`${s}/enum`,error:`Instance does not match any of ${JSON.stringify(g)}.`})),v!==void 0){let t=`${s}/not`;$(e,v,n,r,i,a,o,t).valid&&U.push({instanceLocation:o,keyword:`not`,keywordLocation:t,error:`Instance matched "not" schema.`})}let pe=[];if(y!==void 0){let t=`${s}/anyOf`,l=U.length,u=!1;for(let[s,l]of y.entries()){let d=Object.create(c),f=$(e,l,n,r,i,p===!0?a:null,o,`${t}/${s}`,d);U.push(...f.errors),u||=f.valid,f.valid&&pe.push(d)}u?U.length=l:U.splice(l,0,{instanceLocation:o,keyword:`anyOf`,keywordLocation:t,error:`Instance does not match any subschemas.`})}if(b!==void 0){let t=`${s}/allOf`,l=U.length,u=!0;for(let[s,l]of b.entries()){let d=Object.create(c),f=$(e,l,n,r,i,p===!0?a:null,o,`${t}/${s}`,d);U.push(...f.errors),u&&=f.valid,f.valid&&pe.push(d)}u?U.length=l:U.splice(l,0,{instanceLocation:o,keyword:`allOf`,keywordLocation:t,error:`Instance does not match every subschema.`})}if(x!==void 0){let t=`${s}/oneOf`,l=U.length,u=x.filter((s,l)=>{let u=Object.create(c),d=$(e,s,n,r,i,p===!0?a:null,o,`${t}/${l}`,u);return U.push(...d.errors),d.valid&&pe.push(u),d.valid}).length;u===1?U.length=l:U.splice(l,0,{instanceLocation:o,keyword:`oneOf`,keywordLocation:t,error:`Instance does not match exactly one subschema (${u} matches).`})}if((u===`object`||u===`array`)&&Object.assign(c,...pe),S!==void 0){let t=`${s}/if`,l=Object.create(null);if($(e,S,n,r,i,a,o,t,l).valid){if(Object.assign(c,l),C!==void 0){let l=$(e,C,n,r,i,a,o,`${s}/then`,c);l.valid||U.push({instanceLocation:o,keyword:`if`,keywordLocation:t,error:`Instance does not match "then" schema.`},...l.errors)}}else if(w!==void 0){let l=$(e,w,n,r,i,a,o,`${s}/else`,c);l.valid||U.push({instanceLocation:o,keyword:`if`,keywordLocation:t,error:`Instance does not match "else" schema.`},...l.errors)}}if(u===`object`){if(_!==void 0)for(let t of _)Vt(e,t)||U.push({instanceLocation:o,keyword:`required`,keywordLocation:`${s}/required`,error:`Instance does not have required property "${t}".`});let t=Object.keys(e);if(k!==void 0&&t.length<k&&U.push({instanceLocation:o,keyword:`minProperties`,keywordLocation:`${s}/minProperties`,error:`Instance does not have at least ${k} properties.`}),A!==void 0&&t.length>A&&U.push({instanceLocation:o,keyword:`maxProperties`,keywordLocation:`${s}/maxProperties`,error:`Instance does not have at least ${A} properties.`}),te!==void 0){let t=`${s}/propertyNames`;for(let s in e){let e=`${o}/${Z(s)}`,c=$(s,te,n,r,i,a,e,t);c.valid||U.push({instanceLocation:o,keyword:`propertyNames`,keywordLocation:t,error:`Property name "${s}" does not match schema.`},...c.errors)}}if(j!==void 0){let t=`${s}/dependantRequired`;for(let n in j)if(Vt(e,n)){let r=j[n];for(let i of r)Vt(e,i)||U.push({instanceLocation:o,keyword:`dependentRequired`,keywordLocation:t,error:`Instance has "${n}" but does not have "${i}".`})}}if(M!==void 0)for(let[t,l]of Object.entries(M)){let u=`${s}/dependentSchemas`;if(Vt(e,t)){let s=$(e,l,n,r,i,a,o,`${u}/${Z(t)}`,c);s.valid||U.push({instanceLocation:o,keyword:`dependentSchemas`,keywordLocation:u,error:`Instance has "${t}" but does not match dependant schema.`},...s.errors)}}if(ne!==void 0){let t=`${s}/dependencies`;for(let s in ne)if(Vt(e,s)){let c=ne[s];if(Array.isArray(c))for(let n of c)Vt(e,n)||U.push({instanceLocation:o,keyword:`dependencies`,keywordLocation:t,error:`Instance has "${s}" but does not have "${n}".`});else{let l=$(e,c,n,r,i,a,o,`${t}/${Z(s)}`);l.valid||U.push({instanceLocation:o,keyword:`dependencies`,keywordLocation:t,error:`Instance has "${s}" but does not match dependant schema.`},...l.errors)}}}let l=Object.create(null),u=!1;if(E!==void 0){let t=`${s}/properties`;for(let[s,d]of Object.entries(E)){if(!Vt(e,s))continue;let f=`${o}/${Z(s)}`,p=$(e[s],d,n,r,i,a,f,`${t}/${Z(s)}`);if(l[s]=!0,p.valid)c[s]=!0;else if(u=i,U.push({instanceLocation:o,keyword:`properties`,keywordLocation:t,error:`Property "${s}" does not match schema.`},...p.errors),u)break}}if(!u&&ee!==void 0){let t=`${s}/patternProperties`;for(let[s,d]of Object.entries(ee)){let f=new RegExp(s,`u`);for(let p in e){if(!f.test(p))continue;let m=`${o}/${Z(p)}`,h=$(e[p],d,n,r,i,a,m,`${t}/${Z(s)}`);l[p]=!0,h.valid?c[p]=!0:(u=i,U.push({instanceLocation:o,keyword:`patternProperties`,keywordLocation:t,error:`Property "${p}" matches pattern "${s}" but does not match associated schema.`},...h.errors))}}}if(!u&&D!==void 0){let t=`${s}/additionalProperties`;for(let s in e){if(l[s])continue;let d=`${o}/${Z(s)}`,f=$(e[s],D,n,r,i,a,d,t);f.valid?c[s]=!0:(u=i,U.push({instanceLocation:o,keyword:`additionalProperties`,keywordLocation:t,error:`Property "${s}" does not match additional properties schema.`},...f.errors))}}else if(!u&&O!==void 0){let t=`${s}/unevaluatedProperties`;for(let s in e)if(!c[s]){let l=`${o}/${Z(s)}`,u=$(e[s],O,n,r,i,a,l,t);u.valid?c[s]=!0:U.push({instanceLocation:o,keyword:`unevaluatedProperties`,keywordLocation:t,error:`Property "${s}" does not match unevaluated properties schema.`},...u.errors)}}}else if(u===`array`){R!==void 0&&e.length>R&&U.push({instanceLocation:o,keyword:`maxItems`,keywordLocation:`${s}/maxItems`,error:`Array has too many items (${e.length} > ${R}).`}),L!==void 0&&e.length<L&&U.push({instanceLocation:o,keyword:`minItems`,keywordLocation:`${s}/minItems`,error:`Array has too few items (${e.length} < ${L}).`});let t=e.length,l=0,u=!1;if(re!==void 0){let d=`${s}/prefixItems`,f=Math.min(re.length,t);for(;l<f;l++){let t=$(e[l],re[l],n,r,i,a,`${o}/${l}`,`${d}/${l}`);if(c[l]=!0,!t.valid&&(u=i,U.push({instanceLocation:o,keyword:`prefixItems`,keywordLocation:d,error:`Items did not match schema.`},...t.errors),u))break}}if(N!==void 0){let d=`${s}/items`;if(Array.isArray(N)){let s=Math.min(N.length,t);for(;l<s;l++){let t=$(e[l],N[l],n,r,i,a,`${o}/${l}`,`${d}/${l}`);if(c[l]=!0,!t.valid&&(u=i,U.push({instanceLocation:o,keyword:`items`,keywordLocation:d,error:`Items did not match schema.`},...t.errors),u))break}}else for(;l<t;l++){let t=$(e[l],N,n,r,i,a,`${o}/${l}`,d);if(c[l]=!0,!t.valid&&(u=i,U.push({instanceLocation:o,keyword:`items`,keywordLocation:d,error:`Items did not match schema.`},...t.errors),u))break}if(!u&&ie!==void 0){let d=`${s}/additionalItems`;for(;l<t;l++){let t=$(e[l],ie,n,r,i,a,`${o}/${l}`,d);c[l]=!0,t.valid||(u=i,U.push({instanceLocation:o,keyword:`additionalItems`,keywordLocation:d,error:`Items did not match additional items schema.`},...t.errors))}}}if(ae!==void 0){if(t===0&&F===void 0)U.push({instanceLocation:o,keyword:`contains`,keywordLocation:`${s}/contains`,error:`Array is empty. It must contain at least one item matching the schema.`});else if(F!==void 0&&t<F)U.push({instanceLocation:o,keyword:`minContains`,keywordLocation:`${s}/minContains`,error:`Array has less items (${t}) than minContains (${F}).`});else{let l=`${s}/contains`,u=U.length,d=0;for(let s=0;s<t;s++){let t=$(e[s],ae,n,r,i,a,`${o}/${s}`,l);t.valid?(c[s]=!0,d++):U.push(...t.errors)}d>=(F||0)&&(U.length=u),F===void 0&&d===0?U.splice(u,0,{instanceLocation:o,keyword:`contains`,keywordLocation:l,error:`Array does not contain item matching schema.`}):F!==void 0&&d<F?U.push({instanceLocation:o,keyword:`minContains`,keywordLocation:`${s}/minContains`,error:`Array must contain at least ${F} items matching schema. Only ${d} items were found.`}):I!==void 0&&d>I&&U.push({instanceLocation:o,keyword:`maxContains`,keywordLocation:`${s}/maxContains`,error:`Array may contain at most ${I} items matching schema. ${d} items were found.`})}}if(!u&&P!==void 0){let u=`${s}/unevaluatedItems`;for(;l<t;l++){if(c[l])continue;let t=$(e[l],P,n,r,i,a,`${o}/${l}`,u);c[l]=!0,t.valid||U.push({instanceLocation:o,keyword:`unevaluatedItems`,keywordLocation:u,error:`Items did not match unevaluated items schema.`},...t.errors)}}if(oe)for(let n=0;n<t;n++){let r=e[n],i=typeof r==`object`&&!!r;for(let a=0;a<t;a++){if(n===a)continue;let t=e[a];(r===t||i&&typeof t==`object`&&t&&tt(r,t))&&(U.push({instanceLocation:o,keyword:`uniqueItems`,keywordLocation:`${s}/uniqueItems`,error:`Duplicate items at indexes ${n} and ${a}.`}),n=2**53-1,a=2**53-1)}}}else if(u===`number`)n===`4`?(z!==void 0&&(V===!0&&e<=z||e<z)&&U.push({instanceLocation:o,keyword:`minimum`,keywordLocation:`${s}/minimum`,error:`${e} is less than ${V?`or equal to `:``} ${z}.`}),B!==void 0&&(se===!0&&e>=B||e>B)&&U.push({instanceLocation:o,keyword:`maximum`,keywordLocation:`${s}/maximum`,error:`${e} is greater than ${se?`or equal to `:``} ${B}.`})):(z!==void 0&&e<z&&U.push({instanceLocation:o,keyword:`minimum`,keywordLocation:`${s}/minimum`,error:`${e} is less than ${z}.`}),B!==void 0&&e>B&&U.push({instanceLocation:o,keyword:`maximum`,keywordLocation:`${s}/maximum`,error:`${e} is greater than ${B}.`}),V!==void 0&&e<=V&&U.push({instanceLocation:o,keyword:`exclusiveMinimum`,keywordLocation:`${s}/exclusiveMinimum`,error:`${e} is less than ${V}.`}),se!==void 0&&e>=se&&U.push({instanceLocation:o,keyword:`exclusiveMaximum`,keywordLocation:`${s}/exclusiveMaximum`,error:`${e} is greater than or equal to ${se}.`})),ce!==void 0&&(Ut(e,ce)||U.push({instanceLocation:o,keyword:`multipleOf`,keywordLocation:`${s}/multipleOf`,error:`${e} is not a multiple of ${ce}.`}));else if(u===`string`){let t=H===void 0&&le===void 0?0:Bt(e);H!==void 0&&t<H&&U.push({instanceLocation:o,keyword:`minLength`,keywordLocation:`${s}/minLength`,error:`String is too short (${t} < ${H}).`}),le!==void 0&&t>le&&U.push({instanceLocation:o,keyword:`maxLength`,keywordLocation:`${s}/maxLength`,error:`String is too long (${t} > ${le}).`}),ue!==void 0&&!new RegExp(ue,`u`).test(e)&&U.push({instanceLocation:o,keyword:`pattern`,keywordLocation:`${s}/pattern`,error:`String does not match pattern.`}),T!==void 0&&kt[T]&&!kt[T](e)&&U.push({instanceLocation:o,keyword:`format`,keywordLocation:`${s}/format`,error:`String does not match format "${T}".`})}return{valid:U.length===0,errors:U}}var Wt=class{schema;draft;shortCircuit;lookup;constructor(e,t=`2019-09`,n=!0){this.schema=e,this.draft=t,this.shortCircuit=n,this.lookup=ft(e)}validate(e){return $(e,this.schema,this.draft,this.lookup,this.shortCircuit)}addSchema(e,t){t&&(e={...e,$id:t}),ft(e,this.lookup)}};function Gt({view:e,onActed:t}){let n=e.pending&&e.pending.actions||[],r=e.pending&&e.pending.tool_requests||[];return n.length===0&&r.length===0?null:K`
    <section aria-labelledby="pending-h" class="pending">
      <h2 id="pending-h">Waiting on you</h2>
      ${n.map(n=>K`<${Kt} key=${n.action_id} runID=${e.run_id} action=${n} onActed=${t} />`)}
      ${r.map(n=>K`<${Yt} key=${n.request_id} runID=${e.run_id} req=${n} onActed=${t} />`)}
    </section>`}function Kt({runID:e,action:t,onActed:n}){let[r,i]=W(``),[a,o]=W(``),[s,c]=W(!1),l=async i=>{c(!0),o(``);try{n(await J.approve(e,t.action_id,i,r.trim()))}catch(e){o(e.message),c(!1)}},u=`reason-${t.action_id}`;return K`
    <article class="card" aria-labelledby=${`${u}-h`}>
      <h3 id=${`${u}-h`}>Approve <span class="mono">${t.tool_name}</span>?</h3>
      ${t.run_id&&K`<p class="dim">of child run <a class="mono" href=${`#/runs/${t.run_id}`}>${t.run_id}</a></p>`}
      <p class="summary">${t.summary}</p>
      <h4>Preview (redacted)</h4>
      <pre>${Ke(t.preview)}</pre>
      <p class="dim">Expires <time datetime=${t.expires_at}>${Y(t.expires_at)}</time></p>
      <label for=${u}>Reason (optional)</label>
      <input id=${u} value=${r} onInput=${e=>i(e.currentTarget.value)} />
      <div class="row">
        <button type="button" class="good" disabled=${s} onClick=${()=>l(`accept`)}>Approve</button>
        <button type="button" class="danger" disabled=${s} onClick=${()=>l(`reject`)}>Reject</button>
      </div>
      ${a&&K`<p class="error" role="alert">${a}</p>`}
    </article>`}var qt=null;async function Jt(){return qt||=(await J.openAPI()).components.schemas.ToolResult,new Wt(qt,`2020-12`,!1)}function Yt({runID:e,req:t,onActed:n}){let[r,i]=W(`{}`),[a,o]=W(!1),[s,c]=W(``),[l,u]=W(!1),d=`result-${t.request_id}`;return K`
    <article class="card" aria-labelledby=${`${d}-h`}>
      <h3 id=${`${d}-h`}>Client tool <span class="mono">${t.tool_name}</span></h3>
      ${t.run_id&&K`<p class="dim">of child run <a class="mono" href=${`#/runs/${t.run_id}`}>${t.run_id}</a></p>`}
      <h4>Parameters</h4>
      <pre>${Ke(t.parameters||{})}</pre>
      <p class="dim">Expires <time datetime=${t.expires_at}>${Y(t.expires_at)}</time></p>
      <form onSubmit=${async i=>{i.preventDefault(),c(``);let o;if(a)o={request_id:t.request_id,success:!1,error:r.trim()||`the client tool failed`};else{let e;try{e=JSON.parse(r)}catch(e){c(`Not valid JSON: ${e.message}`);return}o={request_id:t.request_id,success:!0,result:e}}u(!0);try{let t=(await Jt()).validate(o);if(!t.valid){c(`Does not match the tool result schema: ${t.errors.map(e=>`${e.instanceLocation} ${e.error}`).join(`; `)}`),u(!1);return}n(await J.submitResult(e,o))}catch(e){c(e.message),u(!1)}}} noValidate>
        <label for=${d}>${a?`Error message`:`Result (JSON)`}</label>
        <textarea id=${d} rows="4" spellcheck="false" value=${r} onInput=${e=>i(e.currentTarget.value)}
          aria-invalid=${s?`true`:void 0} aria-describedby=${s?`${d}-error`:void 0}></textarea>
        <label class="check"><input type="checkbox" checked=${a} onChange=${e=>o(e.currentTarget.checked)} /> The tool failed</label>
        <button type="submit" disabled=${l}>Submit result</button>
        ${s&&K`<p id=${`${d}-error`} class="error" role="alert">${s}</p>`}
      </form>
    </article>`}function Xt(e,t=[]){let n=[],r=null,i=new Map,a=new Map,o=(e,t)=>{r&&!r.end&&(r.end=e,r.outcome=t)};for(let t of e){let e=t.data||{};switch(t.type){case`turn_started`:o(t.at,`replied`),r={kind:`model turn`,detail:`turn ${t.turn}`,turn:t.turn,start:t.at,end:null,retries:0,outcome:`in flight`,chained:!!e.chained},n.push(r);break;case`model_retry`:r&&r.retries++;break;case`tool_call`:case`messages_updated`:case`completed`:o(t.at,`replied`);break;case`failed`:case`cancelled`:case`budget_exceeded`:case`max_turns_reached`:case`interrupt_received`:o(t.at,t.type);break;case`tool_call_start`:{let r={kind:`tool call`,detail:e.tool_name||e.name||``,callId:e.tool_call_id,start:t.at,end:null,retries:0,outcome:`in flight`};i.set(e.tool_call_id,r),n.push(r);break}case`tool_retry`:{let t=i.get(e.tool_call_id);t&&(t.retries++,t.end||(t.outcome=`retrying: attempt ${e.attempt} of ${e.attempts} failed (${e.reason})${e.wait?`, again in ${e.wait}`:``}`));break}case`approval_required`:case`runtime_tool_pending`:{let r={kind:t.type===`approval_required`?`waiting for approval`:`waiting for client tool`,detail:e.tool_name||``,start:t.at,end:null,retries:0,outcome:`waiting`};a.set(e.tool_call_id,r),n.push(r);break}case`approval_decided`:case`runtime_tool_result_submitted`:{let n=a.get(e.tool_call_id);n&&!n.end&&(n.end=t.at,n.outcome=t.type===`approval_decided`?e.decision||`decided`:`submitted`);break}case`child_run_finished`:{let n=i.get(e.tool_call_id);n&&!n.end&&(n.end=t.at,n.outcome=e.status===`completed`?`succeeded`:`failed (child ${e.status})`);break}case`tool_result`:{let n=i.get(e.tool_call_id);n&&!n.end&&(n.end=t.at,n.outcome=e.success?`succeeded`:`failed${e.error_type?` (${e.error_type})`:``}`,e.replayed&&(n.outcome+=`, replayed`),n.chained=!!e.chained,n.inDoubt=e.error_type===`in_doubt`);let r=a.get(e.tool_call_id);r&&!r.end&&(r.end=t.at,r.outcome=e.success?`answered`:`ended`);break}}}for(let e of t){let t=e.kind===`tool_call`?n.find(t=>t.callId&&t.callId===e.tool_call_id):e.turn&&n.find(t=>t.turn===e.turn);t?(t.redeliveries=(t.redeliveries||0)+e.redeliveries,t.stale=(t.stale||0)+e.stale):n.push({kind:e.kind===`tool_call`?`tool call`:`model turn`,detail:`step ${e.step_seq}`,start:e.last_at,end:e.last_at,retries:0,redeliveries:e.redeliveries,stale:e.stale,outcome:e.stale?`delivery dropped (stale)`:`delivered again`})}return n}var Zt=[[`reuse`,`reuse: a call the run made gets its recorded result; others run`],[`replay`,`replay: nothing runs; a call the run never made fails`],[`live`,`live: every call runs again`]];function Qt({runID:e,message:t,version:n,onClose:r}){let i=t.content||``,[a,o]=W(i),[s,c]=W(`reuse`),[l,u]=W(``),[d,f]=W(``),[p,m]=W(!1),h=ge(new Map),g=`fork-${t.seq}`,_=async n=>{n.preventDefault();let r={seq:t.seq,tools:s};if(a!==i){if(!a.trim()){f(`Write the message, or put back the original text.`);return}r.content=a}l.trim()&&(r.agent_version=l.trim());let o=JSON.stringify(r);h.current.has(o)||h.current.set(o,crypto.randomUUID()),m(!0),f(``);try{let t=await J.fork(e,r,h.current.get(o));location.hash=`#/runs/${encodeURIComponent(t.run_id)}`}catch(e){f(e.message),m(!1)}},v=t.role===`user`;return K`
    <form class="fork-form" onSubmit=${_} aria-labelledby=${`${g}-h`}>
      <h3 id=${`${g}-h`}>Fork from message ${t.seq}</h3>
      <label for=${`${g}-content`}>${v?`Message`:`Answer`}</label>
      <p class="hint" id=${`${g}-hint`}>${v?`The fork keeps the messages before this one and asks this instead.`:`Left as it is, the model is asked again; an edited answer ends the fork with it.`}</p>
      <textarea id=${`${g}-content`} rows="3" aria-describedby=${`${g}-hint`} value=${a} onInput=${e=>o(e.currentTarget.value)}></textarea>
      <div class="row">
        <label for=${`${g}-tools`}>Tool calls</label>
        <select id=${`${g}-tools`} value=${s} onChange=${e=>c(e.currentTarget.value)}>
          ${Zt.map(([e,t])=>K`<option value=${e}>${t}</option>`)}
        </select>
      </div>
      <div class="row">
        <label for=${`${g}-version`}>Agent version (optional)</label>
        <input id=${`${g}-version`} class="mono" aria-describedby=${`${g}-version-hint`} value=${l} onInput=${e=>u(e.currentTarget.value)} />
      </div>
      <p class="hint" id=${`${g}-version-hint`}>Empty: this run's version${n?K`, <span class="mono">${n}</span>`:``}.</p>
      <div class="row">
        <button type="submit" disabled=${p}>Start fork</button>
        <button type="button" class="secondary" onClick=${r}>Close</button>
      </div>
      ${d&&K`<p class="error" role="alert">${d}</p>`}
    </form>`}function $t({view:e}){let[t,n]=W([]),[r,i]=W(!1);G(()=>{let t=new AbortController;return J.listRuns({forked_from:e.run_id,limit:100},t.signal).then(t=>{let r=t&&t.runs||[],a=r.filter(t=>t.forked_from&&t.forked_from.run_id===e.run_id);n(a),i(!!(t&&t.next_cursor)&&a.length===r.length)},()=>n([])),()=>t.abort()},[e.run_id]);let a=e.forked_from;if(!a&&t.length===0)return null;let o=e=>K`<a class="mono" href=${`#/runs/${encodeURIComponent(e)}`}>${e}</a>`;return K`
    <div class="lineage" data-testid="lineage">
      ${a&&K`<p>Forked from ${o(a.run_id)} at message ${a.seq}${a.tools?` (tools: ${a.tools})`:``}</p>`}
      ${t.length>0&&K`<p>Forks: ${t.map((e,t)=>K`${t?`, `:``}${o(e.run_id)}`)}${r?`, and more`:``}</p>`}
    </div>`}function en(e){return e.map((e,t)=>typeof e.seq==`number`?e:{...e,seq:t+1})}function tn(e,t){let n=typeof e.first_seq==`number`&&e.first_seq>0?e.first_seq:1/0;return new Set(t.filter(e=>(e.role===`user`||e.role===`assistant`)&&e.seq>=n).map(e=>e.seq))}var nn=50,rn=5e3,an=6e4,on=e=>K`<a class="mono" href=${`#/runs/${encodeURIComponent(e)}`}>${e}</a>`,sn=e=>K`<a class="mono" href=${`#/schedules/${encodeURIComponent(e)}`}>${e}</a>`;function cn({iso:e}){let t=He(e);return K`<time datetime=${e} title=${t.utc}>${t.local}</time>`}var ln=e=>e.at?K`once, at <${cn} iso=${e.at} />`:K`<code>${e.cron}</code>`,un=e=>K`${e.agent}${(e.alias||e.agent_version)&&K`<div class="dim mono version">${e.alias?`alias ${e.alias}`:e.agent_version}</div>`}`,dn=e=>K`<span class=${`badge ${e.paused?`paused`:`active`}`}>${e.paused?`paused`:`active`}</span>`;function fn({s:e,max:t=5}){let n=(e.next_fire_times||[]).slice(0,t);return e.paused?K`<span class="dim">none while paused</span>`:n.length===0?K`<span class="dim">none</span>`:K`<ul class="next">${n.map(e=>K`<li key=${e}><${cn} iso=${e} /></li>`)}</ul>`}function pn(){let[e,t]=W(null),[n,r]=W(``),[i,a]=W(``),[o,s]=W(!1),[c,l]=W(!1);return G(()=>{if(c)return;let e=new AbortController,n,i=()=>J.listSchedules({limit:nn},e.signal).then(e=>{t(e.schedules||[]),r(e.next_cursor||``),a(``),n=setTimeout(i,an)},e=>{e.name!==`AbortError`&&a(e.message)});return i(),()=>{e.abort(),clearTimeout(n)}},[c]),K`
    <h1>Schedules</h1>
    <p class="dim">Create a schedule with <code>baton schedules create --agent A --cron EXPR --input TEXT</code> (or <code>POST /v1/schedules</code>); open one for its history. Times are in your time zone; hover one for UTC.</p>
    ${i&&K`<p class="error" role="alert">${i}</p>`}
    ${!e&&!i&&K`<p>Loading…</p>`}
    ${e&&K`
      <table class="schedules">
        <caption class="visually-hidden">Schedules</caption>
        <thead><tr>
          <th scope="col">Schedule</th><th scope="col">Agent</th><th scope="col">When</th><th scope="col">Next fire times</th>
          <th scope="col">State</th><th scope="col">Last run</th>
        </tr></thead>
        <tbody>
          ${e.map(e=>K`
            <tr key=${e.schedule_id} data-schedule-id=${e.schedule_id}>
              <td data-label="Schedule" class="id-cell">${sn(e.schedule_id)}</td>
              <td data-label="Agent">${un(e)}</td>
              <td data-label="When">${ln(e)}<div class="dim">${e.timezone}</div></td>
              <td data-label="Next fire times"><${fn} s=${e} max=${3} /></td>
              <td data-label="State">${dn(e)}</td>
              <td data-label="Last run" class="id-cell">${e.last_run_id?on(e.last_run_id):K`<span class="dim">none yet</span>`}</td>
            </tr>`)}
          ${e.length===0&&K`<tr><td colspan="6">No schedules.</td></tr>`}
        </tbody>
      </table>
      ${n&&K`<nav class="pager" aria-label="Pages"><button type="button" disabled=${o} onClick=${async()=>{s(!0),l(!0);try{let i=await J.listSchedules({limit:nn,cursor:n});t([...e,...i.schedules||[]]),r(i.next_cursor||``)}catch(e){a(e.message)}s(!1)}}>More schedules</button></nav>`}`}`}var mn=e=>K`<span class=${`badge o-${e.outcome}`}>${e.outcome}</span>`;function hn({id:e}){let[t,n]=W(null),[r,i]=W(null),[a,o]=W(``),[s,c]=W(!1),[l,u]=W(``),[d,f]=W(``),[p,m]=W(!1),[h,g]=W(!1),[_,v]=W(!1);G(()=>{if(_)return;let t=new AbortController,r,a=async()=>{try{let[r,a]=await Promise.all([J.getSchedule(e,t.signal),s?null:J.triggers(e,{limit:nn},t.signal)]);n(r),a&&(i(a.triggers||[]),o(a.next_cursor||``)),u(``)}catch(e){if(e.name===`AbortError`||(u(e.message),e.status===404))return}r=setTimeout(a,rn)};return a(),()=>{t.abort(),clearTimeout(r)}},[e,s,_]);let y=async()=>{m(!0);try{let t=await J.triggers(e,{limit:nn,cursor:a});c(!0),i([...r,...t.triggers||[]]),o(t.next_cursor||``)}catch(e){u(e.message)}m(!1)},b=async t=>{m(!0),u(``);try{n(await J.pauseSchedule(e,t)),f(t?`Paused: it starts no runs until resumed.`:`Resumed.`)}catch(e){u(e.message)}m(!1)};return t?K`
    <p><a href="#/schedules">← Schedules</a></p>
    <h1>Schedule <span class="mono">${t.schedule_id}</span></h1>
    ${l&&K`<p class="error" role="alert">${l}</p>`}
    <p class="count" aria-live="polite">${d}</p>
    <dl class="facts">
      <div><dt id="state-label">State</dt><dd><span role="status" aria-labelledby="state-label">${_?K`<span class="badge deleted">deleted</span>`:dn(t)}</span></dd></div>
      <div><dt>Agent</dt><dd>${t.agent}${t.alias?` (alias ${t.alias})`:``}${t.agent_version?K` <span class="mono">${t.agent_version}</span>`:``}</dd></div>
      <div><dt>When</dt><dd>${ln(t)} <span class="dim">(${t.timezone})</span></dd></div>
      ${t.start&&K`<div><dt>From</dt><dd><${cn} iso=${t.start} /></dd></div>`}
      ${t.end&&K`<div><dt>Until</dt><dd><${cn} iso=${t.end} /></dd></div>`}
      <div><dt>Overlap</dt><dd>${t.overlap}</dd></div>
      <div><dt>Missed</dt><dd>${t.missed}</dd></div>
      <div><dt>Last run</dt><dd>${t.last_run_id?on(t.last_run_id):K`<span class="dim">none yet</span>`}</dd></div>
      <div><dt>Created</dt><dd><time datetime=${t.created_at}>${Y(t.created_at)}</time></dd></div>
      <div><dt>Updated</dt><dd><time datetime=${t.updated_at}>${Y(t.updated_at)}</time></dd></div>
    </dl>
    ${!_&&K`
      <div class="controls schedule-controls">
        <div class="row">
          ${t.paused?K`<button type="button" class="good" disabled=${p} onClick=${()=>b(!1)}>Resume</button>`:K`<button type="button" disabled=${p} onClick=${()=>b(!0)}>Pause</button>`}
          ${!h&&K`<button type="button" class="danger" disabled=${p} onClick=${()=>g(!0)}>Delete</button>`}
        </div>
        ${h&&K`
          <div class="confirm" role="alertdialog" aria-labelledby="delete-question">
            <p id="delete-question"><strong>Delete schedule ${t.schedule_id}?</strong> It fires no more; its history stays until it expires.</p>
            <div class="row">
              <button type="button" class="danger" disabled=${p} onClick=${async()=>{m(!0),u(``);try{await J.deleteSchedule(e),v(!0),g(!1),f(`Deleted schedule ${e}. The runs it started are not affected.`)}catch(e){u(e.message)}m(!1)}}>Yes, delete it</button>
              <button type="button" class="secondary" disabled=${p} onClick=${()=>g(!1)}>Keep it</button>
            </div>
          </div>`}
      </div>`}
    <div class="columns schedule-columns">
      <section aria-labelledby="history-h">
        <h2 id="history-h">Trigger history</h2>
        <table class="triggers">
          <caption class="visually-hidden">Fire times of ${t.schedule_id}, latest first</caption>
          <thead><tr><th scope="col">Fire time</th><th scope="col">Outcome</th><th scope="col">Run</th><th scope="col">Reason</th></tr></thead>
          <tbody>
            ${(r||[]).map(e=>K`
              <tr key=${e.fire_time} data-fire-time=${e.fire_time}>
                <td data-label="Fire time"><${cn} iso=${e.fire_time} /></td>
                <td data-label="Outcome">${mn(e)}</td>
                <td data-label="Run" class="id-cell">${e.run_id?on(e.run_id):K`<span class="dim">none</span>`}</td>
                <td data-label="Reason" class="reason">${e.reason||``}</td>
              </tr>`)}
            ${r&&r.length===0&&K`<tr><td colspan="4">No fire time reached yet.</td></tr>`}
          </tbody>
        </table>
        ${a&&K`<nav class="pager" aria-label="Pages"><button type="button" disabled=${p} onClick=${y}>Older fire times</button></nav>`}
      </section>
      <section aria-labelledby="next-h">
        <h2 id="next-h">Next fire times</h2>
        <${fn} s=${t} />
        <h2>Each run is asked</h2>
        <pre>${Ke(t.request)}</pre>
      </section>
    </div>`:K`<p><a href="#/schedules">← Schedules</a></p><h1>Schedule <span class="mono">${e}</span></h1>${l?K`<p class="error" role="alert">${l}</p>`:K`<p>Loading…</p>`}`}function gn({view:e}){return e.schedule_id?K`
    <div class="lineage" data-testid="scheduled-by">
      <p>Scheduled by ${sn(e.schedule_id)}${e.scheduled_for&&K`, for the fire time <${cn} iso=${e.scheduled_for} />`}</p>
    </div>`:null}var _n=2e3;function vn({id:e}){let[t,n]=W(null),[r,i]=W(null),[a,o]=W({}),[s,c]=W(``),[l,u]=W(0),d=ge(null),f=e=>{d.current=e,n(e),e.result&&e.result.messages_truncated?yn(e.run_id).then(i,()=>i(null)):i(null)};G(()=>{let t=new AbortController,n=null,r=async()=>{try{f(await J.getRun(e,t.signal)),c(``)}catch(e){e.name!==`AbortError`&&c(e.message)}},i=()=>{clearTimeout(n),n=setTimeout(r,100)},a=0;return(async()=>{for(await r();!t.signal.aborted;){let s=d.current;if(!s||Be(s.status)||Ve(s.status))return;try{await Ie(e,a,e=>{if(e.id&&Number(e.id)>a&&(a=Number(e.id)),e.event===`token`&&e.data&&typeof e.data.delta==`string`){let t=e.data.turn;o(n=>({...n,[t]:(n[t]||``)+e.data.delta}))}else e.event===`end`&&e.data&&e.data.run_id?(clearTimeout(n),f(e.data)):e.event!==`thinking`&&e.event!==`id`&&i()},t.signal)}catch{if(t.signal.aborted)return;await new Promise(e=>setTimeout(e,_n)),await r()}}})(),()=>{t.abort(),clearTimeout(n)}},[e,l]);let p=e=>{f(e),u(e=>e+1)};if(!t)return K`<h1>Run ${e}</h1>${s?K`<p class="error" role="alert">${s}</p>`:K`<p>Loading…</p>`}`;let m=t.result||{},h=en(r||m.messages||[]);return K`
    <p><a href="#/runs">← Runs</a></p>
    <h1>Run <span class="mono">${t.run_id}</span></h1>
    ${s&&K`<p class="error" role="alert">${s}</p>`}
    <${xn} view=${t} />
    <${$t} view=${t} />
    <${gn} view=${t} />
    <${Sn} view=${t} onActed=${p} />
    <${Gt} view=${t} onActed=${p} />
    <div class="columns">
      <section aria-labelledby="transcript-h" class="transcript">
        <h2 id="transcript-h">Transcript</h2>
        <${Cn} view=${t} messages=${h} result=${m} live=${a} running=${!Be(t.status)&&!Ve(t.status)} />
      </section>
      <section aria-labelledby="steps-h" class="steps">
        <h2 id="steps-h">Steps</h2>
        <${Dn} events=${m.events||[]} deliveries=${t.deliveries||[]} />
        ${t.children&&t.children.length>0&&K`
          <h2 id="children-h">Child runs</h2>
          <${On} children=${t.children} events=${m.events||[]} deliveries=${t.deliveries||[]} />`}
        <h2>Usage and cost</h2>
        <${kn} view=${t} />
      </section>
    </div>`}async function yn(e){let t=[],n=0;for(;;){let r=await J.messages(e,n);if(t.push(...r.messages),r.messages.length===0||r.next===n)return t;n=r.next}}function bn(e){let t=e.result||{};if(t.error&&t.error.message)return t.error.message;if(e.status===`budget_exceeded`&&t.budget)return`budget ${t.budget} reached`;if(t.interrupted&&t.interrupted.reason)return t.interrupted.reason;let n=t.events||[];for(let t=n.length-1;t>=0;t--){let r=n[t];if(r.type===`cancelled`&&r.data&&r.data.reason)return r.data.reason;if(r.type===`approval_required`&&e.status===`approval_required`)return`an action waits for approval`;if(r.type===`runtime_tool_pending`&&e.status===`runtime_tool_pending`)return`a client tool waits for its result`}return``}function xn({view:e}){let t=bn(e);return K`
    <dl class="facts">
      <div><dt id="status-label">Status</dt><dd><span role="status" aria-labelledby="status-label" class=${`badge s-${e.status}`}>${e.status}</span>${Ve(e.status)&&K` <span class="marker">waiting on you</span>`}</dd></div>
      ${t&&K`<div><dt>Reason</dt><dd>${t}</dd></div>`}
      <div><dt>Agent</dt><dd>${e.agent}</dd></div>
      ${e.agent_version&&K`<div><dt>Version</dt><dd class="mono">${e.agent_version}</dd></div>`}
      <div><dt>Session</dt><dd class="mono">${e.session_id}</dd></div>
      <div><dt>Started</dt><dd><time datetime=${e.created_at}>${Y(e.created_at)}</time></dd></div>
      <div><dt>Updated</dt><dd><time datetime=${e.updated_at}>${Y(e.updated_at)}</time></dd></div>
      <div><dt>Turns</dt><dd>${e.result?e.result.turn_count:0}</dd></div>
    </dl>`}function Sn({view:e,onActed:t}){let[n,r]=W(``),[i,a]=W(``),[o,s]=W(``),[c,l]=W(!1);if(Be(e.status))return null;let u=async e=>{l(!0),s(``);try{return t(await e()),!0}catch(e){return s(e.message),!1}finally{l(!1)}};return K`
    <section aria-labelledby="controls-h" class="controls">
      <h2 id="controls-h">Control</h2>
      <form onSubmit=${async t=>{t.preventDefault(),n.trim()?await u(()=>J.steer(e.run_id,n))&&r(``):s(`Write a message first.`)}} class="steer">
        <label for="steer">Message to the agent</label>
        <textarea id="steer" rows="2" value=${n} onInput=${e=>r(e.currentTarget.value)}></textarea>
        <button type="submit" disabled=${c}>Send message</button>
      </form>
      <div class="row">
        <label for="stop-reason">Reason to stop</label>
        <input id="stop-reason" value=${i} onInput=${e=>a(e.currentTarget.value)} />
        <button type="button" class="danger" disabled=${c} onClick=${()=>u(()=>J.cancel(e.run_id,i))}>Cancel run</button>
        <button type="button" disabled=${c} onClick=${()=>u(()=>J.interrupt(e.run_id,i))}>Interrupt</button>
      </div>
      ${o&&K`<p class="error" role="alert">${o}</p>`}
    </section>`}function Cn({view:e,messages:t,result:n,live:r,running:i}){let[a,o]=W(0),s=tn(e,t),c=new Map;for(let e of t)e.role===`tool_result`&&e.metadata&&e.metadata.tool_call_id&&c.set(e.metadata.tool_call_id,e);let l=new Map;for(let e of n.tool_audit_events||[])l.set(e.tool_call_id,e);let u=new Set(t.filter(e=>e.role===`assistant`&&e.metadata).map(e=>e.metadata.turn)),d=[];t.forEach((n,r)=>{let i=n.metadata||{};if(n.role===`tool_result`&&i.tool_call_id&&t.some(e=>e.role===`tool_call`&&e.metadata&&e.metadata.tool_call_id===i.tool_call_id))return;if(n.role===`tool_call`){d.push(K`<${wn} key=${`c${r}`} call=${n} result=${c.get(i.tool_call_id)} audit=${l.get(i.tool_call_id)} />`);return}let u=s.has(n.seq),f=u&&a===n.seq;d.push(K`
      <li key=${`m${r}`} class=${`msg role-${n.role}`} data-seq=${n.seq}>
        <div class="who head">
          <span>${i.source===`memory`?K`recalled memories <span class="dim">in the model's system prompt</span>`:n.role}${i.turn?K` <span class="dim">turn ${i.turn}</span>`:``}</span>
          ${u&&K`<button type="button" class="link fork" aria-expanded=${f?`true`:`false`} onClick=${()=>o(f?0:n.seq)}>Fork from here</button>`}
        </div>
        <div class="text">${n.content}</div>
        ${f&&K`<${Qt} runID=${e.run_id} message=${n} version=${e.agent_version} onClose=${()=>o(0)} />`}
      </li>`)});for(let[e,t]of Object.entries(r))!u.has(Number(e))&&t&&d.push(K`
      <li key=${`live${e}`} class="msg role-assistant streaming" aria-live="polite" aria-busy=${i?`true`:`false`}>
        <div class="who">assistant <span class="dim">turn ${e}, streaming</span></div>
        <div class="text" data-testid="streaming-text">${t}</div>
      </li>`);return d.length===0?K`<p>No messages yet.</p>`:K`<ol class="messages">${d}</ol>`}function wn({call:e,result:t,audit:n}){let r=e.metadata||{},i=t&&t.metadata||{};return K`
    <li class="msg tool" data-tool-call-id=${r.tool_call_id}>
      <div class="who">tool call <strong>${r.tool_name}</strong> <span class="dim mono">${r.tool_call_id}</span>${r.turn?K` <span class="dim">turn ${r.turn}</span>`:``}</div>
      <div class="pair">
        <div>
          <h3>Parameters</h3>
          <pre>${Ke(r.parameters===void 0?{}:r.parameters)}</pre>
        </div>
        <div>
          <h3>Result ${t?K`<span class=${i.success===!1?`bad`:`good`}>${i.success===!1?`failed${i.error_type&&i.error_type!==`not_recorded`?` (${i.error_type})`:``}`:`succeeded`}</span>`:K`<span class="dim">pending</span>`}
            ${i.replayed&&K` <span class="badge replayed">replayed</span>`}
            ${i.error_type===`not_recorded`&&K` <span class="badge not-recorded">not recorded</span>`}</h3>
          ${i.replayed&&K`<p class="note">Answered from the record of ${Tn(i.replayed_from)}: nothing ran again.</p>`}
          ${t&&K`<pre>${Ke(t.content)}</pre>`}
          ${n&&K`<p class="audit">audit: result <span class="mono">${n.result_sha256}</span>, parameters <span class="mono">${n.parameters_sha256}</span>, executor ${n.executor}</p>`}
        </div>
      </div>
    </li>`}function Tn(e){return!e||!e.run_id?`the source run`:K`run <a class="mono" href=${`#/runs/${encodeURIComponent(e.run_id)}`}>${e.run_id}</a>${e.seq?` (message ${e.seq})`:``}`}function En(e){let t=e.end&&(e.kind===`model turn`||e.kind===`tool call`)?[e.chained?`chained`:`queued`]:[];return e.retries&&t.push(`${e.retries} ${e.retries===1?`retry`:`retries`}`),e.redeliveries&&t.push(`delivered again ${e.redeliveries}×`),e.stale&&t.push(`${e.stale} stale`),t.join(`, `)}function Dn({events:e,deliveries:t}){let n=Xt(e,t);return n.length===0?K`<p>No steps yet.</p>`:K`
    <div class="scroll">
    <table class="timeline">
      <caption class="visually-hidden">Durable steps of the run</caption>
      <thead><tr><th scope="col">Step</th><th scope="col">Started</th><th scope="col">Took</th><th scope="col">Deliveries</th><th scope="col">Outcome</th></tr></thead>
      <tbody>
        ${n.map((e,t)=>K`
          <tr key=${t} class=${e.inDoubt?`in-doubt`:``} data-call-id=${e.callId}>
            <td>${e.kind}${e.detail?K` <span class="dim">${e.detail}</span>`:``}</td>
            <td><time datetime=${e.start}>${new Date(e.start).toLocaleTimeString()}</time></td>
            <td>${e.end?Ue(new Date(e.end)-new Date(e.start)):`in flight`}</td>
            <td>${En(e)}</td>
            <td>${e.outcome}${e.inDoubt?K` <strong>in_doubt</strong>`:``}</td>
          </tr>`)}
      </tbody>
    </table>
    </div>`}function On({children:e,events:t,deliveries:n}){let r=Xt(t,n);return K`
    <ul class="children" aria-labelledby="children-h">
      ${e.map(e=>{let t=r.find(t=>t.callId===e.tool_call_id)||{},n=t.start&&t.end?Ue(new Date(t.end)-new Date(t.start)):``;return K`
        <li key=${e.run_id} data-run-id=${e.run_id}>
          <a class="mono" href=${`#/runs/${e.run_id}`}>${e.run_id}</a>
          <span class=${`badge s-${e.status}`}>${e.status}</span>
          <span class="dim">${e.agent}, call ${e.tool_call_id}${n?`, took ${n}`:``}${e.cost?`, ${X(e.cost.total_usd)}`:``}</span>
        </li>`})}
    </ul>`}function kn({view:e}){let t=e.result||{},n=t.usage||{},r=t.cost,i=e.budgets||[];return K`
    <dl class="facts">
      ${Object.entries(n).filter(([,e])=>typeof e==`number`).map(([e,t])=>K`<div key=${e}><dt>${e.replaceAll(`_`,` `)}</dt><dd>${t.toLocaleString()}</dd></div>`)}
      ${r&&K`<div><dt>cost</dt><dd><strong>${X(r.total_usd)}</strong> <span class="dim">(model ${X(r.model_usd)}, AWS ${X(r.aws_usd)})</span></dd></div>`}
    </dl>
    ${i.length>0&&K`
      <h3>Budgets</h3>
      <ul class="budgets">
        ${i.map(e=>{let t=e.name===`cost_usd`,n=t?e.current_usd||0:e.current,r=t?e.ceiling_usd:e.ceiling,i=`budget-${e.name}`;return K`<li key=${e.name}><span id=${i}>${e.name}</span>: ${t?`${X(n)} of ${X(r)}`:`${n} of ${r}`}
            <meter aria-labelledby=${i} min="0" max=${r} value=${Math.min(n,r)} high=${r*.8}></meter></li>`})}
      </ul>`}`}function An(){let[e,t]=W(null),[n,r]=W(null),[i,a]=W(``);if(G(()=>{let e=new AbortController;return(async()=>{try{let[n,i]=await Promise.all([J.versions(e.signal),J.listRuns({limit:100},e.signal)]);t(n),r(i.runs||[])}catch(e){if(e.name===`AbortError`)return;a(e.status===403?`Agent versions need a credential with the agents:manage scope; this one lacks it.`:e.message)}})(),()=>e.abort()},[]),i)return K`<h1>Agent versions</h1><p class="error" role="alert">${i}</p>`;if(!e)return K`<h1>Agent versions</h1><p>Loading…</p>`;let o={};for(let e of n||[])e.agent_version&&(o[e.agent_version]=(o[e.agent_version]||0)+1);let s={};for(let t of e.aliases){for(let e of t.routes)(s[e.version]=s[e.version]||[]).push(e.weight<100?`${t.name} ${e.weight}%`:t.name);for(let[e,n]of Object.entries(t.tenants||{}))(s[n]=s[n]||[]).push(`${t.name} (tenant ${e})`)}return K`
    <h1>Agent versions</h1>
    <h2>Aliases</h2>
    <table class="versions">
      <caption class="visually-hidden">Aliases and the versions their new runs start on</caption>
      <thead><tr><th scope="col">Alias</th><th scope="col">New runs go to</th><th scope="col">Tenant pins</th><th scope="col">Changed</th></tr></thead>
      <tbody>
        ${e.aliases.map(e=>K`
          <tr data-alias=${e.name}>
            <td data-label="Alias"><strong>${e.name}</strong><div class="dim">revision ${e.revision}</div></td>
            <td data-label="New runs go to">${e.routes.map(e=>K`<div><span class="mono">${e.version}</span> <span class="weight">${e.weight}%</span></div>`)}</td>
            <td data-label="Tenant pins">${Object.entries(e.tenants||{}).map(([e,t])=>K`<div>${e}: <span class="mono">${t}</span></div>`)}</td>
            <td data-label="Changed"><time datetime=${e.updated_at}>${Y(e.updated_at)}</time><div class="dim">${e.updated_by}</div></td>
          </tr>`)}
        ${e.aliases.length===0&&K`<tr><td colspan="4">No aliases yet.</td></tr>`}
      </tbody>
    </table>
    <h2>Versions</h2>
    <table class="versions">
      <caption class="visually-hidden">Published versions, newest first</caption>
      <thead><tr><th scope="col">Version</th><th scope="col">Published</th><th scope="col">Agents</th><th scope="col">Aliases</th><th scope="col" class="num">Your latest runs</th></tr></thead>
      <tbody>
        ${e.versions.map(e=>K`
          <tr data-version=${e.id}>
            <td data-label="Version" class="mono">${e.id}</td>
            <td data-label="Published"><time datetime=${e.published_at}>${Y(e.published_at)}</time><div class="dim">${e.published_by}</div></td>
            <td data-label="Agents">${e.agents.join(`, `)}</td>
            <td data-label="Aliases">${(s[e.id]||[]).join(`, `)}</td>
            <td data-label="Your latest runs" class="num">${o[e.id]||0}</td>
          </tr>`)}
      </tbody>
    </table>
    <p class="dim">Runs counted among your tenant's latest ${(n||[]).length} runs. Publish and move aliases with <code>baton agents</code>.</p>`}function jn(e){return e?e.pass===!0?`pass`:e.pass===!1?`fail`:e.status||`pending`:`none`}var Mn=e=>(e&&e.checks||[]).filter(e=>!e.pass),Nn=e=>!!e&&(e.status===`running`||e.status===`queued`||e.status===`pending`);function Pn(e,t){let n=new Map((t&&t.cases||[]).map(e=>[e.id,e])),r=(e&&e.cases||[]).map(e=>({id:e.id,a:e,b:n.get(e.id)||null})),i=new Set(r.map(e=>e.id));for(let e of t&&t.cases||[])i.has(e.id)||r.push({id:e.id,a:null,b:e});return r}function Fn(e){let[t,n]=[jn(e.a),jn(e.b)];return t===`fail`&&n===`pass`?`fixed`:t===`pass`&&n===`fail`?`broken`:``}function In(e){return typeof e==`number`?`${(e*100).toFixed(1)}%`:``}function Ln(e){return(e&&e.progress&&e.progress.scored||0)>0?In(e.totals&&e.totals.pass_rate):``}var Rn=(e,t)=>`${e} ${t}${e===1||e===-1?``:`s`}`;function zn(e){let t=e&&e.progress||{},n=t.total||0,r=t.scored||0;return{scored:r,total:n,label:`${r} of ${n} scored${t.failed?`, ${t.failed} failed`:``}`}}function Bn(e,t,n=String){if(typeof e!=`number`||typeof t!=`number`||e===t)return``;let r=t-e;return n(Math.abs(r))===n(0)?``:`${r>0?`+`:`−`}${n(Math.abs(r))}`}var Vn=25,Hn=2e3;function Un(e,t,n){let[r,i]=W(null),[a,o]=W(``);return G(()=>{let n=new AbortController,r;i(null),o(``);let a=async()=>{try{let r=await e(n.signal);if(i(r),o(``),!t(r))return}catch(e){if(e.name===`AbortError`)return;o(e.message)}r=setTimeout(a,Hn)};return a(),()=>{n.abort(),clearTimeout(r)}},[n]),{data:r,error:a}}function Wn({view:e}){let t=zn(e);return K`<span class="progress"><progress max=${Math.max(t.total,1)} value=${t.scored} aria-label=${`${e.eval_id}: ${t.label}`}></progress> <span class="dim">${t.label}</span></span>`}var Gn=e=>K`<span class=${`badge s-${e.status}`}>${e.status}</span>`;function Kn(){let[e,t]=W([``]),n=e[e.length-1],{data:r,error:i}=Un(e=>J.listEvals({limit:Vn,cursor:n},e),e=>(e&&e.evals||[]).some(Nn),n),a=r&&r.evals||[];return K`
    <h1>Evals</h1>
    <p class="dim">Start an eval with <code>baton eval run DATASET.jsonl --agent A</code> (or <code>POST /v1/evals</code>); open one to see its cases, or compare two.</p>
    ${i&&K`<p class="error" role="alert">${i}</p>`}
    <table class="evals">
      <caption class="visually-hidden">Evals, newest first</caption>
      <thead><tr>
        <th scope="col">Eval</th><th scope="col">Agent</th><th scope="col">Status</th><th scope="col">Progress</th>
        <th scope="col" class="num">Pass rate</th><th scope="col">Created</th>
      </tr></thead>
      <tbody>
        ${a.map(e=>K`
          <tr key=${e.eval_id} data-eval-id=${e.eval_id}>
            <td data-label="Eval"><a href=${`#/evals/${encodeURIComponent(e.eval_id)}`}>${e.name||e.eval_id}</a><div class="dim mono id">${e.eval_id}</div></td>
            <td data-label="Agent">${e.agent}${e.agent_version&&K`<div class="dim mono version"><span class="visually-hidden">version </span>${e.agent_version}</div>`}</td>
            <td data-label="Status">${Gn(e)}</td>
            <td data-label="Progress"><${Wn} view=${e} /></td>
            <td data-label="Pass rate" class="num">${Ln(e)}</td>
            <td data-label="Created"><time datetime=${e.created_at}>${Y(e.created_at)}</time></td>
          </tr>`)}
        ${r&&a.length===0&&K`<tr><td colspan="6">No evals yet.</td></tr>`}
        ${!r&&!i&&K`<tr><td colspan="6">Loading…</td></tr>`}
      </tbody>
    </table>
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled=${e.length<2} onClick=${()=>t(e.slice(0,-1))}>Newer evals</button>
      <button type="button" disabled=${!r||!r.next_cursor} onClick=${()=>t([...e,r.next_cursor])}>Older evals</button>
    </nav>`}var qn=e=>`#/evals/${encodeURIComponent(e)}`;function Jn({id:e,against:t}){let{data:n,error:r}=Un(t=>J.getEval(e,t),Nn,e),{data:i,error:a}=Un(e=>t?J.getEval(t,e):Promise.resolve(null),Nn,t||``),[o,s]=W(!1);return n?K`
    <p><a href="#/evals">← Evals</a></p>
    <h1>Eval ${n.name?K`${n.name} `:``}<span class="mono">${n.eval_id}</span></h1>
    ${r&&K`<p class="error" role="alert">${r}</p>`}
    <div class=${t?`pair evals-pair`:``}>
      <${Yn} view=${n} side=${t?`A`:``} />
      ${t&&(i?K`<${Yn} view=${i} side="B" />`:K`<section class="card">${a?K`<p class="error" role="alert">Eval ${t}: ${a}</p>`:K`<p>Loading ${t}…</p>`}</section>`)}
    </div>
    <${Xn} id=${n.eval_id} against=${t} />
    <${Zn} view=${n} />
    <h2 id="cases-h">Cases</h2>
    <label class="check"><input type="checkbox" checked=${o} onChange=${e=>s(e.currentTarget.checked)} /> Show only failed cases</label>
    ${t?K`<${ir} a=${n} b=${i} onlyFailed=${o} />`:K`<${nr} view=${n} onlyFailed=${o} />`}`:K`<h1>Eval <span class="mono">${e}</span></h1>${r?K`<p class="error" role="alert">${r}</p>`:K`<p>Loading…</p>`}`}function Yn({view:e,side:t}){let[n,r]=W(``),[i,a]=W(!1),o=e.totals||{},s=async()=>{a(!0),r(``);try{await J.cancelEval(e.eval_id)}catch(e){r(e.message)}finally{a(!1)}},c=`summary-${e.eval_id}`;return K`
    <section class="eval-summary" aria-labelledby=${c} data-eval-id=${e.eval_id}>
      <h2 id=${c}>${t?`${t}: `:`Summary `}${t&&K`<a class="mono" href=${qn(e.eval_id)}>${e.eval_id}</a>`}</h2>
      <dl class="facts">
        <div><dt>Status</dt><dd><span role="status" aria-label=${`Status of ${e.eval_id}`} class=${`badge s-${e.status}`}>${e.status}</span></dd></div>
        <div><dt>Agent</dt><dd>${e.agent}</dd></div>
        <div><dt>Version</dt><dd class="mono">${e.agent_version}${e.alias?K` <span class="dim">(alias ${e.alias})</span>`:``}</dd></div>
        ${e.tools&&K`<div><dt>Tools</dt><dd>${e.tools}</dd></div>`}
        <div><dt>Created</dt><dd><time datetime=${e.created_at}>${Y(e.created_at)}</time></dd></div>
        ${e.ended_at&&K`<div><dt>Ended</dt><dd><time datetime=${e.ended_at}>${Y(e.ended_at)}</time></dd></div>`}
        <div><dt>Progress</dt><dd><${Wn} view=${e} /></dd></div>
      </dl>
      <dl class="facts totals" aria-label=${`Totals of ${e.eval_id}`}>
        <div><dt>Pass rate</dt><dd><strong>${Ln(e)||`none scored yet`}</strong></dd></div>
        <div><dt>Mean turns</dt><dd>${typeof o.mean_turns==`number`?o.mean_turns.toFixed(1):``}</dd></div>
        <div><dt>Tokens</dt><dd>${We(o.total_tokens)}</dd></div>
        <div><dt>Cost</dt><dd>${typeof o.cost_usd==`number`?X(o.cost_usd):`not priced`}</dd></div>
        <div><dt>Mean duration</dt><dd>${Ue(o.mean_duration_ms)}</dd></div>
      </dl>
      ${Nn(e)&&K`<div class="row"><button type="button" class="danger" disabled=${i} onClick=${s}>Cancel eval</button>
        <span class="dim">Running cases are cancelled; no new case starts.</span></div>`}
      ${n&&K`<p class="error" role="alert">${n}</p>`}
    </section>`}function Xn({id:e,against:t}){let[n,r]=W(t||``),[i,a]=W(``);return K`
    <form class="compare" onSubmit=${t=>{t.preventDefault();let r=n.trim();r?r===e?a(`That is this eval: name another one.`):(a(``),location.hash=`${qn(e)}?against=${encodeURIComponent(r)}`):a(`Write the id of the eval to compare with.`)}}>
      <label for="against">Compare with another eval</label>
      <input id="against" class="mono" placeholder="eval id" value=${n} onInput=${e=>r(e.currentTarget.value)} />
      <button type="submit">Compare</button>
      ${t&&K`<a href=${qn(e)}>Show this eval alone</a>`}
      ${i&&K`<p class="error" role="alert">${i}</p>`}
    </form>`}function Zn({view:e}){let[t,n]=W(``),[r,i]=W(``),[a,o]=W(!1),s=ge(new Map);return K`
    <form class="compare" onSubmit=${async n=>{n.preventDefault();let r=t.trim();if(!r){i(`Write the agent version to run the cases on.`);return}let a={agent:e.agent,agent_version:r,dataset_from:e.eval_id};e.name&&(a.name=e.name),e.judge&&(a.judge=e.judge),e.tools&&(a.tools=e.tools),e.concurrency&&(a.concurrency=e.concurrency),s.current.has(r)||s.current.set(r,crypto.randomUUID()),o(!0),i(``);try{let t=await J.startEval(a,s.current.get(r));location.hash=`${qn(e.eval_id)}?against=${encodeURIComponent(t.eval_id)}`}catch(e){i(e.message)}finally{o(!1)}}}>
      <label for="rerun">Run these cases on another version</label>
      <input id="rerun" class="mono" placeholder="agent version" value=${t} onInput=${e=>n(e.currentTarget.value)} />
      <button type="submit" disabled=${a}>Run again</button>
      ${r&&K`<p class="error" role="alert">${r}</p>`}
    </form>`}var Qn=e=>e&&e.run_id&&K`<a class="mono" href=${`#/runs/${encodeURIComponent(e.run_id)}`}>${e.run_id}</a>`;function $n({c:e}){let t=jn(e),n=t===`none`?`not in this eval`:t;return K`<span class=${`badge v-${t}`}>${n}</span>`}function er({c:e}){if(!e)return null;let t=Mn(e),n=(e.checks||[]).length;return K`
    ${t.length>0?K`<ul class="checks">${t.map(e=>K`<li><strong>${e.name}</strong>${e.detail?K`: ${e.detail}`:``}</li>`)}</ul>`:jn(e)===`pass`&&n>0&&K`<div class="dim">${n===1?`its check passed`:`all ${n} checks passed`}</div>`}
    ${e.judge&&K`<div class="judge">Judge: <strong>${e.judge.score.toFixed(2)}</strong>${e.judge.reason?K` — ${e.judge.reason}`:``}${e.judge.run_id&&K` <a class="dim" href=${`#/runs/${encodeURIComponent(e.judge.run_id)}`}>(judge's run)</a>`}</div>`}
    ${e.diverged_at&&K`<div class="dim">Diverged from the recorded run at message ${e.diverged_at.seq}</div>`}`}var tr=(e,t,n)=>t?e.filter(n):e;function nr({view:e,onlyFailed:t}){let n=tr(e.cases||[],t,e=>jn(e)===`fail`);return K`
    <table class="cases" aria-labelledby="cases-h">
      <thead><tr>
        <th scope="col">Case</th><th scope="col">Result</th><th scope="col">Failing checks, judge</th>
        <th scope="col" class="num">Turns</th><th scope="col" class="num">Tokens</th><th scope="col" class="num">Cost</th><th scope="col">Run</th>
      </tr></thead>
      <tbody>
        ${n.map(e=>K`
          <tr key=${e.id} data-case-id=${e.id} class=${jn(e)===`fail`?`failed`:void 0}>
            <td data-label="Case" class="mono">${e.id}</td>
            <td data-label="Result"><${$n} c=${e} /></td>
            <td data-label="Checks"><${er} c=${e} /></td>
            <td data-label="Turns" class="num">${e.turns}</td>
            <td data-label="Tokens" class="num">${We(e.total_tokens)}</td>
            <td data-label="Cost" class="num">${typeof e.cost_usd==`number`?X(e.cost_usd):``}</td>
            <td data-label="Run">${Qn(e)}</td>
          </tr>`)}
        ${n.length===0&&K`<tr><td colspan="7">${t?`No case failed.`:`No cases.`}</td></tr>`}
      </tbody>
    </table>`}function rr({c:e}){return e?K`
    <${$n} c=${e} />
    <${er} c=${e} />
    <div class="dim nums">${Rn(e.turns??0,`turn`)} · ${We(e.total_tokens)} tokens${typeof e.cost_usd==`number`?` · ${X(e.cost_usd)}`:``}</div>
    <div>${Qn(e)}</div>`:K`<${$n} c=${null} />`}function ir({a:e,b:t,onlyFailed:n}){if(!t)return K`<p>Loading the other eval…</p>`;let r=tr(Pn(e,t),n,e=>jn(e.a)===`fail`||jn(e.b)===`fail`);return K`
    <table class="cases pair-cases" aria-labelledby="cases-h">
      <thead><tr>
        <th scope="col">Case</th><th scope="col">A <span class="mono">${e.agent_version||e.eval_id}</span></th>
        <th scope="col">B <span class="mono">${t.agent_version||t.eval_id}</span></th><th scope="col">B − A</th>
      </tr></thead>
      <tbody>
        ${r.map(e=>{let t=Fn(e),n=e.a&&e.b?[Bn(e.a.turns,e.b.turns)&&`${Bn(e.a.turns,e.b.turns)} turn${Math.abs(e.b.turns-e.a.turns)===1?``:`s`}`,Bn(e.a.total_tokens,e.b.total_tokens,We)&&`${Bn(e.a.total_tokens,e.b.total_tokens,We)} tokens`,Bn(e.a.cost_usd,e.b.cost_usd,X)].filter(Boolean):[];return K`
          <tr key=${e.id} data-case-id=${e.id}>
            <td data-label="Case" class="mono">${e.id}</td>
            <td data-label="A"><${rr} c=${e.a} /></td>
            <td data-label="B"><${rr} c=${e.b} /></td>
            <td data-label="B − A">${t&&K`<span class=${`badge moved-${t}`}>${t}</span>`}${n.map(e=>K`<div>${e}</div>`)}${!t&&n.length===0&&e.a&&e.b&&e.a.pass!==void 0&&e.b.pass!==void 0&&K`<span class="dim">same</span>`}</td>
          </tr>`})}
        ${r.length===0&&K`<tr><td colspan="4">${n?`No case failed on either side.`:`No cases.`}</td></tr>`}
      </tbody>
    </table>`}var ar=50,or=e=>e?`of ${e}`:`of your own subject`,sr=e=>e.status===403?`Forbidden: ${e.message}.`:e.message;function cr({subject:e}){let[t,n]=W(e),[r,i]=W(null),[a,o]=W(``),[s,c]=W(``),[l,u]=W(``),[d,f]=W(!1),[p,m]=W(!1),[h,g]=W(0);G(()=>{let t=new AbortController;return i(null),o(``),c(``),m(!1),J.listMemories({subject:e,limit:ar},t.signal).then(e=>{i(e.memories||[]),o(e.next_cursor||``)},e=>{e.name!==`AbortError`&&c(sr(e))}),()=>t.abort()},[e,h]);let _=n=>{n.preventDefault();let r=t.trim(),i=r?`#/memories?subject=${encodeURIComponent(r)}`:`#/memories`;u(``),location.hash===i||!r&&!e?g(h+1):location.hash=i},v=async()=>{f(!0);try{let t=await J.listMemories({subject:e,limit:ar,cursor:a});i([...r,...t.memories||[]]),o(t.next_cursor||``)}catch(e){c(sr(e))}f(!1)},y=async t=>{f(!0),c(``);try{await J.deleteMemory(t.id,e),i(r.filter(e=>e.id!==t.id)),u(`Deleted memory ${t.id}.`)}catch(e){c(sr(e))}f(!1)},b=async()=>{f(!0),c(``);try{let t=await J.eraseMemories(e);u(`Erased the memories of ${t.subject}: ${t.deleted} deleted. Runs that began before ${Y(t.erased_at)} will not write any more.`),m(!1),g(h+1)}catch(e){c(sr(e))}f(!1)},x=r&&r.length?r[0].subject:e;return K`
    <h1>Memories</h1>
    <form class="toolbar memory-subject" onSubmit=${_}>
      <span class="field">
        <label for="memory-subject">Subject</label>
        <input id="memory-subject" value=${t} placeholder="your own" aria-describedby="memory-subject-hint"
          onInput=${e=>n(e.currentTarget.value)} />
      </span>
      <button type="submit">Show memories</button>
      <p id="memory-subject-hint" class="note">
        The end user whose memories to show. Empty: your own (your credential's identity); another subject needs the memories:subject scope.
      </p>
    </form>
    ${s&&K`<p class="error" role="alert">${s}</p>`}
    <p class="count" aria-live="polite">${l}</p>
    ${!r&&!s&&K`<p>Loading…</p>`}
    ${r&&K`
      <h2>${r.length}${a?`+`:``} memor${r.length===1&&!a?`y`:`ies`} ${or(x)}</h2>
      <table class="memories">
        <caption class="visually-hidden">Memories ${or(x)}</caption>
        <thead><tr>
          <th scope="col">Created</th><th scope="col">Source</th><th scope="col">Source run</th><th scope="col">Text</th><th scope="col"><span class="visually-hidden">Actions</span></th>
        </tr></thead>
        <tbody>
          ${r.map(e=>K`
            <tr key=${e.id} data-memory-id=${e.id}>
              <td data-label="Created"><time datetime=${e.created_at}>${Y(e.created_at)}</time><div class="dim mono id">${e.id}</div></td>
              <td data-label="Source">${e.source||K`<span class="dim">unknown</span>`}</td>
              <td data-label="Source run" class="run">${e.source_run_id?K`<a class="mono" href=${`#/runs/${encodeURIComponent(e.source_run_id)}`}>${e.source_run_id}</a>`:K`<span class="dim">none</span>`}</td>
              <td data-label="Text" class="text">${e.text}</td>
              <td class="actions">
                <button type="button" class="secondary" disabled=${d} aria-label=${`Delete memory ${e.id}`} onClick=${()=>y(e)}>Delete</button>
              </td>
            </tr>`)}
          ${r.length===0&&K`<tr><td colspan="5">No memories ${or(x)}.</td></tr>`}
        </tbody>
      </table>
      ${a&&K`<nav class="pager" aria-label="Pages"><button type="button" disabled=${d} onClick=${v}>More memories</button></nav>`}
      <section class="erase" aria-labelledby="erase-title">
        <h2 id="erase-title">Erase</h2>
        ${!p&&K`
          <p class="note">Deletes every memory ${or(x)}, and refuses what runs that already began would remember later.</p>
          <button type="button" class="danger" disabled=${d} onClick=${()=>m(!0)}>Erase all of this subject</button>`}
        ${p&&K`
          <div class="confirm" role="alertdialog" aria-labelledby="erase-question">
            <p id="erase-question"><strong>Erase every memory ${or(x)}?</strong> This cannot be undone.</p>
            <div class="row">
              <button type="button" class="danger" disabled=${d} onClick=${b}>Yes, erase them all</button>
              <button type="button" class="secondary" disabled=${d} onClick=${()=>m(!1)}>Keep them</button>
            </div>
          </div>`}
      </section>`}`}function lr(){let e=location.hash.replace(/^#/,``)||`/runs`,t=e.match(/^\/runs\/([^/?]+)/);if(t)return{page:`run`,id:decodeURIComponent(t[1])};if(e.startsWith(`/versions`))return{page:`versions`};let n=e.match(/^\/evals\/([^/?]+)(?:\?(.*))?$/);if(n)return{page:`eval`,id:decodeURIComponent(n[1]),against:new URLSearchParams(n[2]||``).get(`against`)||``};if(e.startsWith(`/evals`))return{page:`evals`};let r=e.match(/^\/memories(?:\?(.*))?$/);if(r)return{page:`memories`,subject:new URLSearchParams(r[1]||``).get(`subject`)||``};let i=e.match(/^\/schedules\/([^/?]+)/);return i?{page:`schedule`,id:decodeURIComponent(i[1])}:e.startsWith(`/schedules`)?{page:`schedules`}:{page:`runs`}}function ur(){let[e,t]=W(!!Ae.get()),[n,r]=W(lr()),[i,a]=W(``);return G(()=>{let e=()=>r(lr());return addEventListener(`hashchange`,e),Fe(()=>{Ae.clear(),a(`The API refused the credential (401). Sign in again.`),t(!1)}),()=>removeEventListener(`hashchange`,e)},[]),e?K`
    <header class="top">
      <a class="brand" href="#/runs">Baton</a>
      <nav aria-label="Main">
        <a href="#/runs" aria-current=${n.page===`runs`?`page`:void 0}>Runs</a>
        <a href="#/evals" aria-current=${n.page===`evals`||n.page===`eval`?`page`:void 0}>Evals</a>
        <a href="#/versions" aria-current=${n.page===`versions`?`page`:void 0}>Versions</a>
        <a href="#/memories" aria-current=${n.page===`memories`?`page`:void 0}>Memories</a>
        <a href="#/schedules" aria-current=${n.page===`schedules`||n.page===`schedule`?`page`:void 0}>Schedules</a>
      </nav>
      <button type="button" class="quiet" onClick=${()=>{Ae.clear(),t(!1)}}>Sign out</button>
    </header>
    <main id="main">
      ${{run:()=>K`<${vn} key=${n.id} id=${n.id} />`,versions:()=>K`<${An} />`,evals:()=>K`<${Kn} />`,eval:()=>K`<${Jn} key=${`${n.id}|${n.against}`} id=${n.id} against=${n.against} />`,memories:()=>K`<${cr} key=${n.subject} subject=${n.subject} />`,schedules:()=>K`<${pn} />`,schedule:()=>K`<${hn} key=${n.id} id=${n.id} />`,runs:()=>K`<${Ze} />`}[n.page]()}
    </main>`:K`<${Le} notice=${i} onSignedIn=${()=>{a(``),t(!0)}} />`}I(K`<${ur} />`,document.getElementById(`app`));