/// The standard PAC helper functions, in JavaScript, run on every fresh heap before the script.
///
/// Written in JavaScript rather than as native functions so that a script's mistakes (wrong
/// argument types, odd values) stay inside the sandbox as ordinary JavaScript behaviour. Only the
/// three natives of `PACNativeFunctions` reach the host; the library takes them into a closure
/// and deletes their global names, so a script sees exactly the documented helpers.
///
/// Semantics follow the original Netscape definitions and what browsers do; where those are
/// vague the choices are in docs/pac.md (inclusive ranges that may wrap, `shExpMatch` knowing
/// only `*` and `?`, `dnsResolve` answering IPv4 only, the Ex functions answering both families).
enum PACHelperLibrary {
    static let source = #"""
(function (global) {
  'use strict';
  var resolveAll = global.__pacResolve, localAddresses = global.__pacMyAddresses, nowMillis = global.__pacNow;
  delete global.__pacResolve;
  delete global.__pacMyAddresses;
  delete global.__pacNow;

  var DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
  var MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];

  function list(text) {
    var out = [], parts = String(text || '').split(';');
    for (var i = 0; i < parts.length; i++) if (parts[i] !== '') out.push(parts[i]);
    return out;
  }

  // IPv4 text to a 32-bit unsigned number, or null.
  function ipv4(text) {
    var m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(String(text));
    if (!m) return null;
    var value = 0;
    for (var i = 1; i <= 4; i++) {
      var octet = Number(m[i]);
      if (octet > 255) return null;
      value = value * 256 + octet;
    }
    return value;
  }

  // IPv6 text (optionally with a zone and an embedded IPv4 tail) to eight 16-bit groups, or null.
  function ipv6(text) {
    text = String(text);
    var zone = text.indexOf('%');
    if (zone >= 0) text = text.substring(0, zone);
    if (!/^[0-9A-Fa-f:.]+$/.test(text)) return null;
    var halves = text.split('::');
    if (halves.length > 2) return null;
    function groups(part, last) {
      if (part === '') return [];
      var pieces = part.split(':'), out = [];
      for (var i = 0; i < pieces.length; i++) {
        if (last && i === pieces.length - 1 && pieces[i].indexOf('.') >= 0) {
          var v4 = ipv4(pieces[i]);
          if (v4 === null) return null;
          out.push(Math.floor(v4 / 65536), v4 % 65536);
        } else if (/^[0-9A-Fa-f]{1,4}$/.test(pieces[i])) {
          out.push(parseInt(pieces[i], 16));
        } else {
          return null;
        }
      }
      return out;
    }
    var head = groups(halves[0], halves.length === 1);
    if (head === null) return null;
    if (halves.length === 1) return head.length === 8 ? head : null;
    var tail = groups(halves[1], true);
    if (tail === null || head.length + tail.length > 7) return null;
    var result = head.slice();
    while (result.length + tail.length < 8) result.push(0);
    return result.concat(tail);
  }

  // Either family as {v6, groups}, the groups being 16-bit numbers (two for IPv4).
  function address(text) {
    var v4 = ipv4(text);
    if (v4 !== null) return { v6: false, groups: [Math.floor(v4 / 65536), v4 % 65536] };
    var v6 = ipv6(text);
    return v6 === null ? null : { v6: true, groups: v6 };
  }

  function samePrefix(a, b, bits) {
    for (var i = 0; i < bits; i++) {
      var group = Math.floor(i / 16), shift = 15 - (i % 16);
      if (((a.groups[group] >> shift) & 1) !== ((b.groups[group] >> shift) & 1)) return false;
    }
    return true;
  }

  function compareAddresses(a, b) {
    if (a.v6 !== b.v6) return a.v6 ? -1 : 1;
    for (var i = 0; i < a.groups.length; i++) {
      if (a.groups[i] !== b.groups[i]) return a.groups[i] - b.groups[i];
    }
    return 0;
  }

  // Every address of a host: a literal stands for itself, anything else asks the host resolver.
  function addressesOf(host) {
    host = String(host);
    if (address(host) !== null) return [host];
    return list(resolveAll(host));
  }

  function firstIPv4(addresses) {
    for (var i = 0; i < addresses.length; i++) if (ipv4(addresses[i]) !== null) return addresses[i];
    return null;
  }

  // Shell-style match: '*' is any run of characters, '?' one character, the rest literal.
  function glob(text, pattern) {
    var t = 0, p = 0, star = -1, resume = 0;
    while (t < text.length) {
      var c = p < pattern.length ? pattern.charAt(p) : '';
      if (c === '*') { star = p++; resume = t; }
      else if (c !== '' && (c === '?' || c === text.charAt(t))) { t++; p++; }
      else if (star >= 0) { p = star + 1; t = ++resume; }
      else return false;
    }
    while (p < pattern.length && pattern.charAt(p) === '*') p++;
    return p === pattern.length;
  }

  // Splits a trailing "GMT" (and trailing undefined arguments) off an arguments object.
  function timeArguments(args) {
    var values = Array.prototype.slice.call(args);
    while (values.length > 0 && values[values.length - 1] === undefined) values.pop();
    var gmt = values.length > 0 && String(values[values.length - 1]).toUpperCase() === 'GMT';
    if (gmt) values.pop();
    return { values: values, gmt: gmt };
  }

  // Inclusive range check; a range whose start is past its end wraps around (FRI..MON, 22..6).
  function inRange(value, low, high) {
    return low <= high ? (value >= low && value <= high) : (value >= low || value <= high);
  }

  function integer(value) {
    if (typeof value === 'number') return Math.floor(value) === value ? value : null;
    if (!/^\s*\d+\s*$/.test(String(value))) return null;
    return Number(value);
  }

  function dateComponent(value) {
    var month = MONTHS.indexOf(String(value).toUpperCase());
    if (month >= 0) return { kind: 'M', value: month };
    var number = integer(value);
    if (number === null || number < 1) return null;
    return number <= 31 ? { kind: 'D', value: number } : { kind: 'Y', value: number };
  }

  function dateKey(parts) {
    return (('Y' in parts ? parts.Y : 0) * 12 + ('M' in parts ? parts.M : 0)) * 32 + ('D' in parts ? parts.D : 0);
  }

  var helpers = {
    isPlainHostName: function (host) {
      return String(host).indexOf('.') < 0;
    },
    dnsDomainIs: function (host, domain) {
      host = String(host); domain = String(domain);
      return host.length >= domain.length && host.substring(host.length - domain.length) === domain;
    },
    localHostOrDomainIs: function (host, hostdom) {
      host = String(host); hostdom = String(hostdom);
      if (host === hostdom) return true;
      return host.indexOf('.') < 0 && hostdom.indexOf(host + '.') === 0;
    },
    isResolvable: function (host) {
      return firstIPv4(addressesOf(host)) !== null;
    },
    dnsResolve: function (host) {
      return firstIPv4(addressesOf(host));
    },
    isInNet: function (host, pattern, mask) {
      var target = ipv4(host);
      if (target === null) {
        var resolved = firstIPv4(addressesOf(host));
        if (resolved === null) return false;
        target = ipv4(resolved);
      }
      var net = ipv4(pattern), bits = ipv4(mask);
      if (net === null || bits === null) return false;
      return ((target & bits) >>> 0) === ((net & bits) >>> 0);
    },
    myIpAddress: function () {
      return firstIPv4(list(localAddresses())) || '127.0.0.1';
    },
    dnsDomainLevels: function (host) {
      return String(host).split('.').length - 1;
    },
    shExpMatch: function (text, pattern) {
      return glob(String(text), String(pattern));
    },
    weekdayRange: function () {
      var a = timeArguments(arguments);
      if (a.values.length < 1 || a.values.length > 2) return false;
      var first = DAYS.indexOf(String(a.values[0]).toUpperCase());
      var last = a.values.length === 2 ? DAYS.indexOf(String(a.values[1]).toUpperCase()) : first;
      if (first < 0 || last < 0) return false;
      var now = new Date(nowMillis());
      return inRange(a.gmt ? now.getUTCDay() : now.getDay(), first, last);
    },
    dateRange: function () {
      var a = timeArguments(arguments), values = a.values, count = values.length;
      if (count !== 1 && count !== 2 && count !== 4 && count !== 6) return false;
      var half = count === 1 ? 1 : count / 2, start = {}, end = {}, kinds = '';
      for (var i = 0; i < half; i++) {
        var from = dateComponent(values[i]), to = count === 1 ? from : dateComponent(values[half + i]);
        if (from === null || to === null || from.kind !== to.kind || from.kind in start) return false;
        start[from.kind] = from.value;
        end[to.kind] = to.value;
        kinds += from.kind;
      }
      if (['D', 'M', 'Y', 'DM', 'MY', 'DMY'].indexOf(kinds) < 0) return false;
      var now = new Date(nowMillis()), today = {};
      if ('Y' in start) today.Y = a.gmt ? now.getUTCFullYear() : now.getFullYear();
      if ('M' in start) today.M = a.gmt ? now.getUTCMonth() : now.getMonth();
      if ('D' in start) today.D = a.gmt ? now.getUTCDate() : now.getDate();
      var value = dateKey(today), low = dateKey(start), high = dateKey(end);
      // With a year in the range, time runs one way only; without one, ranges wrap (DEC..JAN).
      return 'Y' in start ? (value >= low && value <= high) : inRange(value, low, high);
    },
    timeRange: function () {
      var a = timeArguments(arguments), v = [];
      for (var i = 0; i < a.values.length; i++) {
        var n = integer(a.values[i]);
        if (n === null) return false;
        v.push(n);
      }
      var low, high;
      switch (v.length) {
        case 1: low = v[0] * 3600; high = low + 3599; break;
        case 2: low = v[0] * 3600; high = v[1] * 3600 + 3599; break;
        case 4: low = v[0] * 3600 + v[1] * 60; high = v[2] * 3600 + v[3] * 60 + 59; break;
        case 6: low = v[0] * 3600 + v[1] * 60 + v[2]; high = v[3] * 3600 + v[4] * 60 + v[5]; break;
        default: return false;
      }
      var now = new Date(nowMillis());
      var second = a.gmt
        ? now.getUTCHours() * 3600 + now.getUTCMinutes() * 60 + now.getUTCSeconds()
        : now.getHours() * 3600 + now.getMinutes() * 60 + now.getSeconds();
      return inRange(second, low, high);
    },
    isResolvableEx: function (host) {
      return addressesOf(host).length > 0;
    },
    dnsResolveEx: function (host) {
      return addressesOf(host).join(';');
    },
    myIpAddressEx: function () {
      return list(localAddresses()).join(';');
    },
    isInNetEx: function (host, prefix) {
      var parts = String(prefix).split('/');
      if (parts.length !== 2) return false;
      var net = address(parts[0]), bits = integer(parts[1]);
      if (net === null || bits === null || bits > net.groups.length * 16) return false;
      var candidates = addressesOf(host);
      for (var i = 0; i < candidates.length; i++) {
        var candidate = address(candidates[i]);
        if (candidate !== null && candidate.v6 === net.v6 && samePrefix(candidate, net, bits)) return true;
      }
      return false;
    },
    sortIpAddressList: function (text) {
      var items = list(text), parsed = [];
      if (items.length === 0) return false;
      for (var i = 0; i < items.length; i++) {
        var a = address(items[i]);
        if (a === null) return false;
        parsed.push({ text: items[i], address: a });
      }
      parsed.sort(function (x, y) { return compareAddresses(x.address, y.address); });
      var out = [];
      for (var j = 0; j < parsed.length; j++) out.push(parsed[j].text);
      return out.join(';');
    },
    getClientVersion: function () {
      return '1.0';
    },
    // Scripts call alert() to debug; browsers log it. Here it goes nowhere: no output channel
    // is exposed to scripts.
    alert: function () {}
  };

  for (var name in helpers) {
    if (Object.prototype.hasOwnProperty.call(helpers, name)) global[name] = helpers[name];
  }
})(this);
"""#
}
